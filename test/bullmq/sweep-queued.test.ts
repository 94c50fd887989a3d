import { createReceiver, type Handler } from "merchant-webhooks";
import { type BullmqQueueOptions, bullmqQueue, createWorker, jobIdFor, sweepQueued } from "merchant-webhooks/bullmq";
import { describe, expect, it, vi } from "vitest";
import { buildNotification } from "../../src/testing/build-notification.js";
import { expectEachSubscriptionInOrder, readCalls, recordingHandlers } from "../ordering/fixtures/recorded-calls.js";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, sleep } from "../support/redis.js";
import { redisTestbed } from "../support/redis-testbed.js";

describe("sweepQueued: a queued notification whose job is gone", () => {
  const { prefix, redis, store, closeAfter } = redisTestbed("sweep");

  function setUp(name: string, ordering: boolean, jobOptions?: BullmqQueueOptions["jobOptions"]) {
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix, ...(jobOptions ? { jobOptions } : {}) });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
    closeAfter(() => receiver.close());
    const deliver = (body: object) =>
      receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: json(body) });
    const startWorker = (onRenew: Handler, sweepQueuedEveryMs = 0) => {
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        sweepQueuedEveryMs,
        onRenew,
      });
      closeAfter(() => worker.close({ timeoutMs: 1_000 }));
      return worker;
    };
    return { queue, deliver, startWorker };
  }

  it("is queued again by a sweep, its handler runs once, and the queue and ledger end empty", async () => {
    const { queue, deliver, startWorker } = setUp("sweep-plain", false);
    const body = notification("SUBSCRIPTION_RENEW");
    expect((await deliver(body)).status).toBe(200);
    expect(await queue.queue.remove(jobIdFor(body.id))).toBe(1);
    expect((await store.get(body.id))?.state).toBe("queued");
    // A redelivery would say "already queued" only while a job exists; the sender has stopped anyway.

    expect(await sweepQueued({ queue, store, olderThanMs: 0 })).toEqual({ checked: 1, requeued: 1, dropped: 0 });
    const onRenew = vi.fn();
    startWorker(onRenew);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the completion");
    expect(onRenew).toHaveBeenCalledTimes(1);
    await eventually(async () => (await queue.queue.getJobCountByTypes("waiting", "delayed", "active")) === 0);
    // The worker drops the copy once done (with others of its batch): the next sweep has nothing to look at.
    await eventually(async () => (await queue.ledger.due(Date.now() + 1, 10)).length === 0, 5_000, "the copy's drop");
    expect(await sweepQueued({ queue, store, olderThanMs: 0 })).toEqual({ checked: 0, requeued: 0, dropped: 0 });
  });

  it("drops done notifications' copies in batches, and what is gathered when the worker closes", async () => {
    const { queue, deliver, startWorker } = setUp("sweep-batched", false);
    const bodies = Array.from({ length: 20 }, () => notification("SUBSCRIPTION_RENEW"));
    for (const body of bodies) expect((await deliver(body)).status).toBe(200);
    expect(await queue.ledger.due(Date.now() + 1, 100)).toHaveLength(20);
    const onRenew = vi.fn();
    const worker = startWorker(onRenew);
    await eventually(
      async () => (await Promise.all(bodies.map((b) => store.get(b.id)))).every((r) => r?.state === "completed"),
      10_000,
      "every completion",
    );
    // Closed at once, the worker sends the drops it still holds before it goes.
    await worker.close();
    expect(await queue.ledger.due(Date.now() + 1, 100)).toEqual([]);
    expect(onRenew).toHaveBeenCalledTimes(20);
  });

  it("leaves a notification whose job is still there, and drops a copy left behind by a done one without running it again", async () => {
    const { queue, deliver, startWorker } = setUp("sweep-kept", false);
    const body = notification("SUBSCRIPTION_RENEW");
    expect((await deliver(body)).status).toBe(200);
    expect(await sweepQueued({ queue, store, olderThanMs: 0 })).toEqual({ checked: 1, requeued: 0, dropped: 0 });
    expect(await queue.queue.getJobCountByTypes("waiting")).toBe(1);

    const onRenew = vi.fn();
    startWorker(onRenew);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the completion");
    // As if the worker's drop of the copy had been lost (a failover of the ledger's master).
    await eventually(async () => (await queue.ledger.due(Date.now() + 1, 10)).length === 0, 5_000, "the copy's drop");
    await queue.ledger.keep(body.id, { id: body.id } as never, 0);
    expect(await sweepQueued({ queue, store, olderThanMs: 0 })).toEqual({ checked: 1, requeued: 0, dropped: 1 });
    await sleep(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("pages through every copy, however many more than one page: done ones dropped, lost ones queued again", async () => {
    const { queue, deliver } = setUp("sweep-pages", false);
    const bodies = Array.from({ length: 25 }, () => notification("SUBSCRIPTION_RENEW"));
    for (const body of bodies) expect((await deliver(body)).status).toBe(200);
    for (const body of bodies) expect(await queue.queue.remove(jobIdFor(body.id))).toBe(1);
    // Eight ran elsewhere: their records completed, their copies left behind.
    for (const body of bodies.slice(0, 8)) {
      const claim = await store.claim({ kind: "take", id: body.id, fingerprint: "", owner: "w", leaseMs: 5_000 });
      expect(claim.status).toBe("claimed");
      expect(await store.complete({ id: body.id, owner: "w" }, { processed: true, message: "ok" })).toBe(true);
    }
    expect(await sweepQueued({ queue, store, olderThanMs: 0, limit: 10 })).toEqual({
      checked: 25,
      requeued: 17,
      dropped: 8,
    });
    expect(await queue.queue.getJobCountByTypes("waiting")).toBe(17);
  });

  it("keeps the copy of a failed notification while BullMQ still holds its job for a retry", async () => {
    const { queue, deliver, startWorker } = setUp("sweep-retry", false, {
      attempts: 3,
      backoff: { type: "fixed", delay: 60_000 },
    });
    const body = notification("SUBSCRIPTION_RENEW");
    expect((await deliver(body)).status).toBe(200);
    const worker = startWorker(() => {
      throw new Error("the bank is down");
    });
    await eventually(async () => (await store.get(body.id))?.state === "failed", 10_000, "the failed attempt");
    await eventually(async () => (await queue.queue.getJobState(jobIdFor(body.id))) === "delayed", 10_000, "the retry");
    await worker.close({ timeoutMs: 1_000 });
    expect(await sweepQueued({ queue, store, olderThanMs: 0 })).toEqual({ checked: 1, requeued: 0, dropped: 0 });
    expect((await queue.ledger.find(body.id))?.data?.id).toBe(body.id);
    // Once BullMQ lets the job go (to the failed set, for `redrive`, or removed), the copy goes too.
    expect(await queue.queue.remove(jobIdFor(body.id))).toBe(1);
    expect(await sweepQueued({ queue, store, olderThanMs: 0 })).toEqual({ checked: 1, requeued: 0, dropped: 1 });
  });

  it("by the worker's own timer, with ordering: each of a subscription's lost jobs runs once, in position order", async () => {
    const { queue, deliver, startWorker } = setUp("sweep-ordered", true);
    const run = prefix.replace(/[^A-Za-z0-9-]/g, "");
    const base = Date.UTC(2026, 2, 1, 0, 0, 0);
    const bodies = [0, 1, 2].map((i) =>
      buildNotification("SUBSCRIPTION_RENEW", {
        id: `WH-${run}-${i}`,
        resource: { merchant_id: "M-1", id: `SUB-${run}`, update_time: new Date(base + i * 1000).toISOString() },
      }),
    );
    for (const body of bodies) expect((await deliver(body)).status).toBe(200);
    for (const body of bodies) expect(await queue.queue.remove(jobIdFor(body.id))).toBe(1);

    const handlers = recordingHandlers(redis, `${prefix}effects:`);
    startWorker(handlers.onRenew, 200);
    await eventually(
      async () => (await readCalls(redis, `${prefix}effects:`, `SUB-${run}`)).length === bodies.length,
      15_000,
      "every notification run",
    );
    const { stale } = await expectEachSubscriptionInOrder(redis, `${prefix}effects:`, bodies);
    expect(stale).toBe(0);
    await eventually(async () => (await queue.queue.getJobCountByTypes("waiting", "delayed", "active")) === 0);
  });
});
