import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, sweepQueued } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { backlog, mailboxStores, sendAll, untilQueueEmpty } from "./fixtures/mailbox.js";
import { expectEachSubscriptionInOrder, readCalls, recordingHandlers } from "./fixtures/recorded-calls.js";

/**
 * A lane whose drain job the queue lost, with the copy of the notification that woke it: the sweep
 * finds it from the store's side (the store's lanes index), not from a copy beside the queue, and
 * every notification accepted into it runs once, in position order. Without a fault, it warns nothing.
 */
describe.each(mailboxStores(uniquePrefix("lane-lost")))(
  "a lane whose drain job was lost, on %s",
  (_name, makeStore) => {
    const prefix = uniquePrefix("lane-lost-queue");
    const effects = `${prefix}effects:`;
    const redis = new Redis(REDIS_URL);
    const store = makeStore();
    const queue = bullmqQueue({ connection: REDIS_URL, name: "lanes", prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const handlers = recordingHandlers(redis, effects);
    const closers: Array<() => Promise<unknown>> = [];
    const startWorker = (logger = silentLogger(), sweepQueuedEveryMs = 0) => {
      const worker = createWorker({
        connection: REDIS_URL,
        name: "lanes",
        prefix,
        idempotency: store,
        logger,
        sweepQueuedEveryMs,
        ...handlers,
      });
      closers.push(() => worker.close({ timeoutMs: 2_000 }));
      return worker;
    };

    afterAll(async () => {
      for (const close of closers.reverse()) await close();
      await receiver.close();
      await queue.close();
      await store.close?.();
      await removeKeys(redis, prefix);
      redis.disconnect();
    });

    // First, before any worker of this file runs: nothing here drains the lanes of these two queues.
    it("is woken only by its own queue's sweep when the store serves another queue too", async () => {
      const own = bullmqQueue({ connection: REDIS_URL, name: "own-lanes", prefix });
      const other = bullmqQueue({ connection: REDIS_URL, name: "other-lanes", prefix });
      const sender = createReceiver({ logger: silentLogger(), idempotency: store, queue: own, ordering: true });
      closers.push(
        () => sender.close(),
        () => own.close(),
        () => other.close(),
      );
      const lane = backlog(`${prefix}-shared`, 3);
      await sendAll(sender, lane);
      const ids = lane.map((n) => n.id);
      expect(await own.queue.remove(jobIdFor(ids[0]!))).toBe(1);
      for (const id of ids) await own.ledger.forget(id);

      // The other queue's sweep leaves the lane alone, however often it looks: nothing lands in it,
      // and the lane is not marked as looked at, so its own queue's sweep still finds it at once.
      for (let look = 0; look < 3; look++)
        expect((await sweepQueued({ queue: other, store, olderThanMs: 0 })).requeued).toBe(0);
      const counts = ["waiting", "delayed", "active", "completed", "failed"] as const;
      expect(Object.values(await other.queue.getJobCounts(...counts))).toEqual([0, 0, 0, 0, 0]);
      expect(await sweepQueued({ queue: own, store, olderThanMs: 0 })).toMatchObject({ requeued: 1, lanes: 1 });
      expect(await own.queue.getJobState(jobIdFor(ids[0]!))).toBe("waiting");
    });

    it("is woken by one sweep from the lane's own data: its head and the 4 accepted after it each run once, in order", async () => {
      const lane = backlog(`${prefix}-lost`, 5);
      await sendAll(receiver, lane);
      // The first woke the lane: its job is the lane's drain job. The others waited without one.
      const ids = lane.map((n) => n.id);
      expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
      expect(await queue.queue.getJobState(jobIdFor(ids[0]!))).toBe("waiting");
      // The fault: the drain job and any copy of the lane's notifications beside the queue are gone.
      expect(await queue.queue.remove(jobIdFor(ids[0]!))).toBe(1);
      for (const id of ids) await queue.ledger.forget(id);
      for (const id of ids) expect(await queue.ledger.find(id)).toBeUndefined();
      expect(await queue.queue.getJobCounts("waiting", "delayed", "active")).toEqual({
        waiting: 0,
        delayed: 0,
        active: 0,
      });

      // Just woken by its receiver, the lane may still be waiting for that receiver's add of its job:
      // a sweep that grants the add its time leaves it alone, however old the sweep takes its lanes to be.
      expect(await sweepQueued({ queue, store, olderThanMs: 0, wokenGraceMs: 60_000 })).toMatchObject({ requeued: 0 });
      const swept = await sweepQueued({ queue, store, olderThanMs: 0 });
      expect(swept).toMatchObject({ requeued: 1, lanes: 1 });
      // One job wakes the lane, from its head; a second sweep finds it running (or waiting) and adds none.
      expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
      expect(await queue.queue.getJobState(jobIdFor(ids[0]!))).toBe("waiting");
      expect((await sweepQueued({ queue, store, olderThanMs: 0 })).requeued).toBe(0);

      startWorker();
      await eventually(
        async () => (await readCalls(redis, effects, lane[0]!.resource.id!)).length === lane.length,
        20_000,
        "every notification of the lane run",
      );
      await untilQueueEmpty(queue);
      const calls = await readCalls(redis, effects, lane[0]!.resource.id!);
      expect(calls.map((call) => call.id)).toEqual(ids);
      const { stale } = await expectEachSubscriptionInOrder(redis, effects, lane);
      expect(stale).toBe(0);
      const key = `M-1:${encodeURIComponent(lane[0]!.resource.id!)}`;
      for (const n of lane) expect((await store.get({ id: n.id, order: { key } }))?.state).toBe("completed");
      // Done, the lane is found empty and leaves the index: the sweep wakes nothing more.
      expect((await sweepQueued({ queue, store, olderThanMs: 0 })).requeued).toBe(0);
    });

    it("is found by a worker's own sweep, once its receiver's add has had its time, and run in order", async () => {
      const own = bullmqQueue({ connection: REDIS_URL, name: "own-sweep", prefix });
      const sender = createReceiver({ logger: silentLogger(), idempotency: store, queue: own, ordering: true });
      closers.push(
        () => sender.close(),
        () => own.close(),
      );
      const lane = backlog(`${prefix}-own-sweep`, 3);
      await sendAll(sender, lane);
      const ids = lane.map((n) => n.id);
      expect(await own.queue.remove(jobIdFor(ids[0]!))).toBe(1);
      for (const id of ids) await own.ledger.forget(id);
      const captured = captureLogger();
      const worker = createWorker({
        connection: REDIS_URL,
        name: "own-sweep",
        prefix,
        idempotency: store,
        logger: captured.logger,
        sweepQueuedEveryMs: 200,
        ...handlers,
      });
      closers.push(() => worker.close({ timeoutMs: 2_000 }));
      await eventually(
        async () => (await readCalls(redis, effects, lane[0]!.resource.id!)).length === lane.length,
        30_000,
        "every notification of the lane run by the worker's own sweep",
      );
      expect((await readCalls(redis, effects, lane[0]!.resource.id!)).map((call) => call.id)).toEqual(ids);
      expect(captured.lines().filter((line) => /lanes whose job was lost/.test(String(line.msg)))).toHaveLength(1);
    }, 40_000);

    it("with no fault, a worker sweeping every 100 ms warns nothing while lanes fill and drain", async () => {
      const captured = captureLogger();
      startWorker(captured.logger, 100);
      const lanes = [0, 1, 2].map((i) => backlog(`${prefix}-quiet-${i}`, 6));
      // Appended in turns, so lanes wake, drain, empty and wake again while the sweep runs beside them.
      for (let round = 0; round < 6; round++) {
        for (const lane of lanes) await sendAll(receiver, [lane[round]!]);
        await sleep(150);
      }
      await eventually(
        async () => {
          const counts = await Promise.all(lanes.map((lane) => readCalls(redis, effects, lane[0]!.resource.id!)));
          return counts.every((calls) => calls.length === 6);
        },
        20_000,
        "every notification run",
      );
      // A few more sweeps over the emptied lanes.
      await sleep(500);
      for (const lane of lanes) {
        const { stale } = await expectEachSubscriptionInOrder(redis, effects, lane);
        expect(stale).toBe(0);
      }
      const warned = captured.lines().filter((line) => line.level >= 40);
      expect(warned).toEqual([]);
    });
  },
);
