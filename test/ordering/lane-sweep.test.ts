import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, sweepQueued } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { backlog, mailboxStores, sendAll, untilQueueEmpty } from "./fixtures/mailbox.js";

/**
 * The ledger sweep looks for notifications whose job was lost. A notification waiting in its
 * subscription's mailbox never had a job of its own: while the mailbox has a runner, it is not lost.
 */
describe.each(mailboxStores(uniquePrefix("lane-sweep")))(
  "the ledger sweep over a mailbox, on %s",
  (_name, makeStore) => {
    const prefix = uniquePrefix("lane-sweep-queue");
    const redis = new Redis(REDIS_URL);
    const store = makeStore();
    const queue = bullmqQueue({ connection: REDIS_URL, name: "sweep", prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const LEASE_MS = 500;
    const shortLease = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue,
      ordering: true,
      leaseMs: LEASE_MS,
    });

    afterAll(async () => {
      await receiver.close();
      await shortLease.close();
      await queue.close();
      await store.close?.();
      await removeKeys(redis, prefix);
      redis.disconnect();
    });

    it("queues nothing again for a mailbox whose drain job is there, and one job for one whose runner is gone", async () => {
      const busy = backlog(`${prefix}-busy`, 5);
      await sendAll(receiver, busy);
      const quiet = await sweepQueued({ queue, store, olderThanMs: 0 });
      expect(quiet.requeued).toBe(0);
      expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });

      // A mailbox whose drain job was lost (removed by hand) and whose runner mark lapsed: a real loss.
      const lost = backlog(`${prefix}-lost`, 3);
      await sendAll(shortLease, lost);
      await queue.queue.remove(jobIdFor(lost[0]!.id));
      await sleep(LEASE_MS + 200);
      const swept = await sweepQueued({ queue, store, olderThanMs: 0 });
      expect(swept.requeued).toBe(1);
      expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 2 });
    });

    // A fault trial saw the worker's own sweep warn of lost jobs in 26 of 30 runs with no fault at all.
    it("warns of nothing while a busy mailbox drains with no fault, the worker's sweep running throughout", async () => {
      const quiet = bullmqQueue({ connection: REDIS_URL, name: "sweep-quiet", prefix });
      const sender = createReceiver({ logger: silentLogger(), idempotency: store, queue: quiet, ordering: true });
      const notifications = backlog(`${prefix}-quiet`, 60);
      await sendAll(sender, notifications);
      const { logger, lines } = captureLogger();
      const runs: string[] = [];
      const worker = createWorker({
        connection: REDIS_URL,
        name: "sweep-quiet",
        prefix,
        idempotency: store,
        logger,
        concurrency: 4,
        // Every 50 ms, each copy older than that looked at: dozens of sweeps during the drain.
        sweepQueuedEveryMs: 50,
        onRenew: async (n) => {
          runs.push(n.id);
          await sleep(20);
        },
      });
      try {
        await eventually(() => runs.length >= notifications.length, 30_000, "every notification run");
        await untilQueueEmpty(quiet);
        await sleep(300);
      } finally {
        await worker.close({ timeoutMs: 2_000 });
        await sender.close();
        await quiet.close();
      }
      expect(runs).toEqual(notifications.map((n) => n.id));
      expect(lines().filter((line) => line.level >= 40)).toEqual([]);
    });
  },
);
