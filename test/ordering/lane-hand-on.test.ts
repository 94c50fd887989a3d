import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { jobIdFor } from "merchant-webhooks/bullmq";
import { createAdmin } from "merchant-webhooks/console";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { backlog, bullmqInProcess, sendAll } from "./fixtures/mailbox.js";

/**
 * On postgresStore every notification of a lane has a BullMQ job of its own. One that meets its lane
 * held is put off, for as long as a whole lease when it is the lane's safety net. When the job running
 * the lane ends in the failed set (its own notification a dead letter) while a waiter it ran waits for
 * its retry, the lane is handed on to that waiter's job: its retry runs when due, not a lease later.
 */
describe("an ordered lane handed on by a drain whose own notification is a dead letter, on postgresStore", () => {
  const prefix = uniquePrefix("lane-hand-on");
  const schema = uniqueSchema("lane_hand_on");
  const redis = new Redis(REDIS_URL);
  const pool = testPool(10);
  const store = postgresStore({ connection: pool, schema });
  // Undone last first: the queue's parts, then the store, then the keys and the schema they leave.
  const cleanup: Array<() => Promise<unknown>> = [
    () => dropSchema(pool, schema).finally(() => pool.end()),
    () => removeKeys(redis, prefix).finally(() => redis.disconnect()),
    async () => store.close?.(),
  ];
  /** The worker's lease: how long a waiter's job put off as the lane's safety net may wait. */
  const LEASE_MS = 120_000;

  beforeAll(() => freshSchema(pool, schema));
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("the waiter runs again at its retry, though its own job was put off for a whole lease", async () => {
    const name = "hand-on";
    const { queue, startWorker } = bullmqInProcess(name, prefix, store, cleanup, {
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
      leaseMs: LEASE_MS,
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    cleanup.push(() => receiver.close());
    const admin = createAdmin({ idempotency: store, queue });
    const [first, second] = backlog(`${prefix}-${name}`, 2) as [SubscriptionNotification, SubscriptionNotification];
    const runs = new Map<string, number>();
    let secondPutOff!: () => void;
    const putOff = new Promise<void>((resolve) => (secondPutOff = resolve));
    startWorker(async (n) => {
      const run = (runs.get(n.id) ?? 0) + 1;
      runs.set(n.id, run);
      // The first always fails: a dead letter after its third run, its job the one running the lane.
      if (n.id === first.id) {
        if (run === 1) await putOff;
        throw new Error("the bank refuses this one");
      }
      if (run === 1) throw new Error("the bank is down for a moment");
    });

    await sendAll(receiver, [first]);
    await eventually(() => runs.get(first.id) === 1, 20_000, "the first running");
    await sendAll(receiver, [second]);
    // The second's job meets the lane held and is put off; as the lane's safety net (its worker found
    // its notification still waiting) it waits a whole lease, which is what it is made to do here.
    await eventually(
      async () => {
        const job = await queue.queue.getJob(jobIdFor(second.id));
        return job?.changeDelay(LEASE_MS).then(
          () => true,
          () => false,
        );
      },
      20_000,
      "the second's job put off",
    );
    secondPutOff();

    await eventually(
      async () => (await admin.getNotification(second.id))?.record?.state === "completed",
      30_000,
      "the second completed at its retry",
    );
    expect(runs.get(first.id)).toBe(3);
    expect(runs.get(second.id)).toBe(2);
    expect((await admin.getNotification(second.id))?.record).toMatchObject({ state: "completed", attempts: 2 });
    expect(await admin.getNotification(first.id)).toMatchObject({
      record: { state: "failed", attempts: 3 },
      job: { state: "failed", attemptsMade: 3 },
    });
  }, 90_000);
});
