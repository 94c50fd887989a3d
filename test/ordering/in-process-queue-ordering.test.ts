import { createReceiver, inProcessQueue, memoryStore } from "merchant-webhooks";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { type KeptStoreBed, postgresBed, redisBed } from "../queue/fixtures/kept-store-beds.js";
import { silentLogger } from "../support/capture-logger.js";

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

describe("ordering with an in-process queue on memoryStore", () => {
  it("holds the subscription while its notification waits in the queue, then runs it under the same claim", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const seen: string[] = [];
    const onRenew = vi.fn(async (n: { id: string }) => {
      seen.push(n.id);
      if (seen.length === 1) await released;
    });
    const receiver = createReceiver({
      idempotency: memoryStore(),
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

describe.each([
  { name: "redisStore", open: () => redisBed("ordering-in-process") },
  { name: "postgresStore", open: () => postgresBed("ordering_in_process") },
])("ordering with an in-process queue on $name, which keeps what it accepts", ({ open }) => {
  const beds: KeptStoreBed[] = [];
  afterAll(async () => {
    for (const bed of beds) await bed.close();
  });

  it("answers an ordered notification once its handler ran: a failed run is the sender's to retry, in order", {
    timeout: 30_000,
  }, async () => {
    const bed = await open();
    beds.push(bed);
    const runs: string[] = [];
    const done: string[] = [];
    let failNext = true;
    const receiver = createReceiver({
      idempotency: bed.store,
      queue: inProcessQueue(),
      logger: silentLogger(),
      ordering: true,
      onRenew: async (n) => {
        runs.push(n.id);
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (failNext) {
          failNext = false;
          throw new Error("failing once on purpose");
        }
        done.push(n.id);
      },
    });
    const first = renewal("2026-03-01T01:00:00Z", "SUB-kept");
    const second = renewal("2026-03-01T02:00:00Z", "SUB-kept");
    // Its run failed before the answer: not accepted, so nothing lapses in a queue the process may lose.
    const failed = await receiver.handle(post(first));
    expect(failed.status).toBe(500);
    expect(JSON.parse(String(failed.body))).toMatchObject({ processed: false });
    expect(runs).toEqual([first.id]);
    // The sender's retry runs it, and the answer comes after the handler.
    const retried = await receiver.handle(post(first));
    expect(retried.status).toBe(200);
    expect(JSON.parse(String(retried.body))).toMatchObject({ processed: true });
    expect(done).toEqual([first.id]);
    expect((await receiver.handle(post(second))).status).toBe(200);
    expect(done).toEqual([first.id, second.id]);
    expect(await bed.store.get({ id: second.id, order: { key: "M-1:SUB-kept" } })).toMatchObject({
      state: "completed",
    });
    await receiver.close();
  });
});
