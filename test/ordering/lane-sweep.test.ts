import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, jobIdFor, sweepQueued } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { backlog, mailboxStores, sendAll } from "./fixtures/mailbox.js";

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
  },
);
