import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, type NotificationWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const post = (notification: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(JSON.stringify(notification)),
});
const event = (type: "SUBSCRIPTION_RENEW" | "SUBSCRIPTION_CANCELLED", updateTime: string) =>
  buildNotification(
    type,
    { resource: { merchant_id: "M-1", id: "SUB-queued", update_time: updateTime } },
    { random: true },
  );

describe("ordering with a BullMQ queue: the worker checks again before running", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("ordering-worker");
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "stale", prefix });
  let worker: NotificationWorker | undefined;

  afterAll(async () => {
    await worker?.close({ timeoutMs: 5_000 });
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("completes a queued renewal as stale when the cancellation after it was applied first", async () => {
    const queued = createReceiver({ idempotency: store, queue, logger: silentLogger(), ordering: true });
    const direct = createReceiver({ idempotency: store, logger: silentLogger(), ordering: true, onCancel: () => {} });
    const renewal = event("SUBSCRIPTION_RENEW", "2026-03-01T01:00:00Z");
    // The renewal is accepted into the queue (no worker yet); then the cancellation is applied directly.
    expect(JSON.parse((await queued.handle(post(renewal))).body)).toEqual({
      processed: true,
      message: "accepted for processing",
    });
    expect((await direct.handle(post(event("SUBSCRIPTION_CANCELLED", "2026-03-01T02:00:00Z")))).status).toBe(200);

    const onRenew = vi.fn();
    const onStale = vi.fn();
    const results: unknown[] = [];
    worker = createWorker({
      connection: REDIS_URL,
      name: "stale",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew,
      onStale,
    });
    worker.worker.on("completed", (_job, result) => results.push(result));
    await eventually(() => results.length === 1, 20_000, "the queued job to finish");

    expect(results).toEqual(["stale"]);
    expect(onRenew).not.toHaveBeenCalled();
    expect(onStale).toHaveBeenCalledTimes(1);
    expect(onStale.mock.calls[0]![1].previousPosition).toBe("2026-03-01T02:00:00Z");
    const record = await store.get({ id: renewal.id, order: { key: "M-1:SUB-queued" } });
    expect(record).toMatchObject({ state: "completed", answer: { processed: true } });
    expect(record!.answer!.message).toMatch(/^stale: /);
    // A redelivery of the renewal is now a duplicate.
    expect(JSON.parse((await queued.handle(post(renewal))).body)).toEqual({
      processed: true,
      message: "already processed",
    });
    await queued.close();
    await direct.close();
  });
});
