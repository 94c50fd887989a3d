import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { type Admin, createAdmin } from "merchant-webhooks/console";
import { postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { backlog, sendAll, untilQueueEmpty } from "./fixtures/mailbox.js";

/**
 * One attempt count everywhere: through BullMQ, an ordered lane's record, its handler's `ctx.attempt`,
 * its dead-letter job and the console say the same number of runs, on every store. The receiver's
 * append to the lane is no run.
 */
describe.each(["memoryStore", "redisStore", "postgresStore"])(
  "the runs of an ordered lane on %s, counted once",
  (kind) => {
    const prefix = uniquePrefix(`lane-attempts-${kind}`);
    const schema = uniqueSchema("lane_attempts");
    const redis = new Redis(REDIS_URL);
    const pool = testPool(10);
    let store: IdempotencyStore;
    const cleanup: Array<() => Promise<unknown>> = [];

    beforeAll(async () => {
      if (kind === "postgresStore") await freshSchema(pool, schema);
      store =
        kind === "memoryStore"
          ? memoryStore()
          : kind === "redisStore"
            ? redisStore({ connection: REDIS_URL, prefix: `${prefix}store:`, timeoutMs: 5_000 })
            : postgresStore({ connection: pool, schema });
    });
    afterAll(async () => {
      for (const step of cleanup.reverse()) await step();
      await store.close?.();
      await removeKeys(redis, prefix);
      redis.disconnect();
      await dropSchema(pool, schema);
      await pool.end();
    });

    /** A receiver and a worker on queue `name`, 3 attempts 50 ms apart; `fails(id, run)` decides a run. */
    function lane(name: string, fails: (run: number) => boolean) {
      const queue = bullmqQueue({
        connection: REDIS_URL,
        name,
        prefix,
        jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
      });
      const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
      const admin = createAdmin({ idempotency: store, queue });
      const seen = new Map<string, number[]>();
      let failing = true;
      const onRenew = async (n: SubscriptionNotification, ctx: { attempt: number }) => {
        seen.set(n.id, [...(seen.get(n.id) ?? []), ctx.attempt]);
        if (failing && fails(seen.get(n.id)!.length)) throw new Error("the bank is down for a moment");
      };
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew,
      });
      cleanup.push(
        () => worker.close({ timeoutMs: 5_000 }),
        () => receiver.close(),
        () => queue.close(),
      );
      const recovered = () => void (failing = false);
      return { queue, receiver, admin, seen, recovered };
    }

    /** Whether the console finds every one of `sent` completed. */
    const allCompleted = async (admin: Admin, sent: SubscriptionNotification[]) =>
      (await Promise.all(sent.map((n) => admin.getNotification(n.id)))).every((d) => d?.record?.state === "completed");

    it("ran once: the record reads 1 attempt, as ctx.attempt and the console's page", async () => {
      const { queue, receiver, admin, seen } = lane("once", () => false);
      const sent = backlog(`${prefix}-once`, 3);
      await sendAll(receiver, sent);
      await eventually(async () => seen.size === 3, 30_000, "every notification run");
      await untilQueueEmpty(queue);
      for (const n of sent) {
        expect(seen.get(n.id), n.id).toEqual([1]);
        const detail = await admin.getNotification(n.id);
        expect(detail?.record, n.id).toMatchObject({ state: "completed", attempts: 1 });
        expect(detail?.timeline.at(-1)?.detail, n.id).toMatch(/^1 attempt;/);
      }
    }, 60_000);

    it("failing once per id: 2 attempts on the record, ctx.attempt 1 then 2, nothing in the failed set", async () => {
      const { queue, receiver, admin, seen } = lane("twice", (run) => run === 1);
      const sent = backlog(`${prefix}-twice`, 3);
      await sendAll(receiver, sent);
      await eventually(() => allCompleted(admin, sent), 30_000, "every notification completed");
      await untilQueueEmpty(queue);
      for (const n of sent) {
        expect(seen.get(n.id), n.id).toEqual([1, 2]);
        expect((await admin.getNotification(n.id))?.record, n.id).toMatchObject({ state: "completed", attempts: 2 });
      }
      expect(await queue.queue.getFailedCount()).toBe(0);
    }, 60_000);

    it("always failing: dead letters after 3 attempts on the record and the job; redriven and done, 4", async () => {
      const { queue, receiver, admin, seen, recovered } = lane("always", () => true);
      const sent = backlog(`${prefix}-always`, 3);
      await sendAll(receiver, sent);
      await eventually(async () => (await queue.queue.getFailedCount()) === 3, 30_000, "3 dead letters");
      for (const n of sent) {
        expect(seen.get(n.id), n.id).toEqual([1, 2, 3]);
        const detail = await admin.getNotification(n.id);
        expect(detail?.record, n.id).toMatchObject({ state: "failed", attempts: 3 });
        expect(detail?.job, n.id).toMatchObject({ state: "failed", attemptsMade: 3 });
      }

      recovered();
      const result = await admin.redrive({ ids: sent.map((n) => n.id) });
      expect(result).toMatchObject({ matched: 3, redriven: 3 });
      await eventually(() => allCompleted(admin, sent), 30_000, "the redriven notifications completed");
      for (const n of sent) {
        expect(seen.get(n.id), n.id).toEqual([1, 2, 3, 4]);
        expect((await admin.getNotification(n.id))?.record, n.id).toMatchObject({ state: "completed", attempts: 4 });
      }
    }, 90_000);
  },
);
