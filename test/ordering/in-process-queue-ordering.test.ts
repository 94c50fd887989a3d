import { Redis } from "ioredis";
import { createReceiver, inProcessQueue } from "merchant-webhooks";
import { failFastRedisOptions, redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const post = (notification: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(JSON.stringify(notification)),
});
const renewal = (updateTime: string, subscription = "SUB-waiting") =>
  buildNotification(
    "SUBSCRIPTION_RENEW",
    { resource: { merchant_id: "M-1", id: subscription, update_time: updateTime } },
    { random: true },
  );

describe("ordering with an in-process queue on redisStore", () => {
  const prefix = uniquePrefix("ordering-in-process");
  const redis = new Redis(REDIS_URL, failFastRedisOptions());
  afterAll(async () => {
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("holds the subscription while its notification waits in the queue, then runs it under the same claim", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const seen: string[] = [];
    const onRenew = vi.fn(async (n: { id: string }) => {
      seen.push(n.id);
      if (seen.length === 1) await released;
    });
    const receiver = createReceiver({
      idempotency: redisStore({ connection: redis, prefix }),
      queue: inProcessQueue({ concurrency: 1 }),
      logger: silentLogger(),
      // Short enough that the wait below renews the claim (and the subscription) several times.
      leaseMs: 300,
      ordering: true,
      onRenew,
    });
    // Another subscription's notification occupies the queue's one slot, so `first` waits behind it.
    const blocker = renewal("2026-03-01T01:00:00Z", "SUB-other");
    const first = renewal("2026-03-01T01:00:00Z");
    const second = renewal("2026-03-01T02:00:00Z");
    expect((await receiver.handle(post(blocker))).status).toBe(200);
    await vi.waitFor(() => expect(seen).toEqual([blocker.id]));
    expect((await receiver.handle(post(first))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 400)); // past one lease: the heartbeat keeps the subscription
    expect((await receiver.handle(post(second))).status).toBe(409);
    release();
    await vi.waitFor(() => expect(seen).toEqual([blocker.id, first.id]));
    await vi.waitFor(async () => expect((await receiver.handle(post(second))).status).toBe(200));
    await vi.waitFor(() => expect(seen).toEqual([blocker.id, first.id, second.id]));
    await receiver.close();
  });
});
