import { Redis } from "ioredis";
import { createReceiver, NonRetriableError } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, type NotificationWorker, redrive } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { backlog, mailboxStores, post, sendAll, untilQueueEmpty, workerProcesses } from "./fixtures/mailbox.js";

/**
 * The documented ordered set-up (redisStore, bullmqQueue, `ordering: true`, `createWorker` with the
 * queue's default 8 attempts), its worker in a process of its own, and a handler that fails.
 */
describe("failures in an ordered lane, run by a worker process", () => {
  const prefix = uniquePrefix("lane-fail");
  const storePrefix = `${prefix}-store:`;
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix, timeoutMs: 5_000 });
  const cleanup: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  function setup(name: string, jobOptions?: Parameters<typeof bullmqQueue>[0]["jobOptions"]) {
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix, ...(jobOptions ? { jobOptions } : {}) });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    cleanup.push(() => receiver.close());
    cleanup.push(() => queue.close());
    const { effects, spawn, done, started } = workerProcesses({
      redis,
      name,
      prefix,
      storePrefix,
      concurrency: 10,
      cleanup,
    });
    const attempts = async (id: string) => (await redis.lrange(`${effects}:attempts:${id}`, 0, -1)).map(Number);
    const record = async (id: string) => (await store.list!({ id })).items[0];
    return { queue, receiver, spawn, done, started, attempts, record };
  }

  it("a handler that fails once per id: every notification retried and completed, in order, none dead", async () => {
    const { queue, receiver, spawn, done, started, attempts, record } = setup("once");
    const notifications = backlog(`${prefix}-once`, 5);
    await sendAll(receiver, notifications);
    await spawn({ FAIL_RUNS: "1" });
    await eventually(async () => (await done()).length >= notifications.length, 90_000, "every notification done");
    expect(await done()).toEqual(notifications.map((n) => n.id));
    for (const n of notifications) {
      expect(await started(n.id), n.id).toBe(2);
      // The handler saw its first run as attempt 1, its retry as attempt 2.
      expect(await attempts(n.id), n.id).toEqual([1, 2]);
      expect((await record(n.id))?.state, n.id).toBe("completed");
    }
    await untilQueueEmpty(queue);
    expect(await queue.queue.getFailedCount()).toBe(0);
  }, 120_000);

  it("a handler that always fails: every notification a dead letter after its attempts; each redriven once, in order", async () => {
    const name = "always";
    const { queue, receiver, spawn, done, started, attempts, record } = setup(name, {
      attempts: 3,
      backoff: { type: "fixed", delay: 100 },
    });
    const notifications = backlog(`${prefix}-always`, 4);
    await sendAll(receiver, notifications);
    const worker = await spawn({ FAIL_RUNS: "3" });
    await eventually(
      async () => (await queue.queue.getFailedCount()) >= notifications.length,
      60_000,
      "every notification in the failed set",
    );
    expect(await done()).toEqual([]);
    for (const n of notifications) {
      expect(await started(n.id), n.id).toBe(3);
      expect(await attempts(n.id), n.id).toEqual([1, 2, 3]);
      expect((await record(n.id))?.state, n.id).toBe("failed");
      expect(await queue.queue.getJobState(jobIdFor(n.id)), n.id).toBe("failed");
    }
    // Each of them in the failed set is where redrive finds it; the ledger keeps what a lost job needs.
    const redriven = await redrive({ connection: REDIS_URL, name, prefix });
    expect([...redriven.redriven].sort()).toEqual(notifications.map((n) => n.id).sort());
    // The handler now succeeds (its fourth run): each runs once more, in position order, none stale.
    await eventually(async () => (await done()).length >= notifications.length, 60_000, "every redriven one done");
    expect(await done()).toEqual(notifications.map((n) => n.id));
    for (const n of notifications) {
      expect(await started(n.id), n.id).toBe(4);
      expect((await record(n.id))?.state, n.id).toBe("completed");
    }
    await untilQueueEmpty(queue);
    worker.kill("SIGTERM");
    await worker.exited;
  }, 120_000);
});

describe("a second delivery of a notification still waiting in its subscription's mailbox", () => {
  const prefix = uniquePrefix("lane-dup");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:`, timeoutMs: 5_000 });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "dup", prefix });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
  let worker: NotificationWorker | undefined;

  afterAll(async () => {
    await worker?.close({ timeoutMs: 5_000 });
    await receiver.close();
    await queue.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("is answered as a duplicate, without a new claim: the one run sees ctx.attempt 1", async () => {
    const notifications = backlog(`${prefix}-dup`, 5);
    await sendAll(receiver, notifications);
    // The third, delivered twice more while it waits (no worker runs yet).
    for (const again of [1, 2]) {
      const response = await receiver.handle(post(notifications[2]));
      expect(response.status, `delivery ${again + 1}`).toBe(200);
      expect(response.answer, `delivery ${again + 1}`).toEqual({
        processed: true,
        message: "already processed",
      });
    }
    // Waiting in its mailbox, it has not run: no delivery counts a run.
    expect((await store.list!({ id: notifications[2]!.id })).items[0]?.attempts).toBe(0);
    const runs: Array<{ id: string; attempt: number }> = [];
    worker = createWorker({
      connection: REDIS_URL,
      name: "dup",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n, ctx) => void runs.push({ id: n.id, attempt: ctx.attempt }),
    });
    await eventually(() => runs.length >= notifications.length, 30_000, "every notification run");
    await untilQueueEmpty(queue);
    expect(runs).toEqual(notifications.map((n) => ({ id: n.id, attempt: 1 })));
    expect((await store.list!({ id: notifications[2]!.id })).items[0]?.attempts).toBe(1);
  }, 60_000);
});

describe.each(mailboxStores(uniquePrefix("lane-retry")))(
  "a lane's failures in one process, on %s",
  (_name, makeStore) => {
    const prefix = uniquePrefix("lane-retry-queue");
    const redis = new Redis(REDIS_URL);
    const store = makeStore();
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name: "retry",
      prefix,
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    let worker: NotificationWorker | undefined;

    afterAll(async () => {
      await worker?.close({ timeoutMs: 5_000 });
      await receiver.close();
      await queue.close();
      await store.close?.();
      await removeKeys(redis, prefix);
      redis.disconnect();
    });

    it("fails once per id: each retried in its turn, in position order, none in the failed set", async () => {
      const notifications = backlog(`${prefix}-retry`, 5);
      await sendAll(receiver, notifications);
      const runs: Array<{ id: string; attempt: number }> = [];
      const done: string[] = [];
      worker = createWorker({
        connection: REDIS_URL,
        name: "retry",
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew: async (n, ctx) => {
          runs.push({ id: n.id, attempt: ctx.attempt });
          if (ctx.attempt === 1) throw new Error("transient");
          done.push(n.id);
        },
      });
      await eventually(() => done.length >= notifications.length, 30_000, "every notification done");
      await untilQueueEmpty(queue);
      expect(done).toEqual(notifications.map((n) => n.id));
      expect(runs).toEqual(notifications.flatMap((n) => [1, 2].map((attempt) => ({ id: n.id, attempt }))));
      for (const n of notifications) expect((await store.list!({ id: n.id })).items[0]?.state, n.id).toBe("completed");
    }, 60_000);
  },
);

describe("a NonRetriableError in an ordered lane", () => {
  const prefix = uniquePrefix("lane-refused");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:`, timeoutMs: 5_000 });
  const queue = bullmqQueue({
    connection: REDIS_URL,
    name: "refused",
    prefix,
    jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
  });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
  let worker: NotificationWorker | undefined;

  afterAll(async () => {
    await worker?.close({ timeoutMs: 5_000 });
    await receiver.close();
    await queue.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("sends a waiter to the dead letters after one run; the rest of the lane runs once each, in order", async () => {
    const notifications = backlog(`${prefix}-refused`, 4);
    const refusedId = notifications[1]!.id;
    await sendAll(receiver, notifications);
    const runs: string[] = [];
    worker = createWorker({
      connection: REDIS_URL,
      name: "refused",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n) => {
        runs.push(n.id);
        if (n.id === refusedId) throw new NonRetriableError("not ours to apply");
      },
    });
    await eventually(async () => (await queue.queue.getJobState(jobIdFor(refusedId))) === "failed", 30_000, "dead");
    await eventually(() => runs.length >= notifications.length, 30_000, "every notification run");
    expect(runs).toEqual(notifications.map((n) => n.id));
    expect((await store.list!({ id: refusedId })).items[0]?.state).toBe("failed");
    expect(await queue.queue.getFailedCount()).toBe(1);
    // Its dead letter is where redrive finds it; older than the ones completed since, it is stale now.
    const redriven = await redrive({ connection: REDIS_URL, name: "refused", prefix });
    expect(redriven.redriven).toEqual([refusedId]);
    await eventually(
      async () => (await store.list!({ id: refusedId })).items[0]?.state === "completed",
      30_000,
      "the redriven one settled",
    );
    expect((await store.list!({ id: refusedId })).items[0]?.answer?.message).toMatch(/^stale/);
    expect(runs).toEqual(notifications.map((n) => n.id));
  }, 60_000);
});
