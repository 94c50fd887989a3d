import { Redis } from "ioredis";
import {
  createReceiver,
  type Handler,
  type IdempotencyStore,
  memoryStore,
  type NotificationQueue,
} from "merchant-webhooks";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, describe, expect, it } from "vitest";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { bedWorkerStarter, laneOf } from "../pg-boss/fixtures/lane.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { bullmqInProcess, post, sendAll } from "./fixtures/mailbox.js";

type Run = { id: string; attempt: number };
type StartWorker = (onRenew: Handler) => void;

/**
 * docs/queues.md: a later delivery of a notification still waiting in its subscription's lane is
 * answered "already processed" and not queued again. Issue 41 saw it claimed again (its attempt + 1)
 * and answered "accepted for processing", the one run then seeing ctx.attempt 3. redisStore with
 * BullMQ is in lane-failures.test.ts; here the other stores and pg-boss.
 */
describe("a second delivery of a notification waiting in its lane, on every other store and queue", () => {
  const prefix = uniquePrefix("lane-dup-all");
  const redis = new Redis(REDIS_URL);
  const bed = pgBossBed("lane_dup", () => "");
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  async function twiceWhileWaiting(
    label: string,
    store: IdempotencyStore,
    queue: NotificationQueue,
    startWorker: StartWorker,
  ) {
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    cleanup.push(() => receiver.close());
    const notifications = laneOf(`SUB-${process.pid}-${label}`, 5, 9);
    await sendAll(receiver, notifications);
    const third = notifications[2]!;
    const attemptsOf = async () => (await store.list!({ id: third.id })).items[0]?.attempts;
    const before = await attemptsOf();
    // Delivered twice more while it waits (no worker runs yet).
    for (const again of [2, 3]) {
      const response = await receiver.handle(post(third));
      expect(response.status, `delivery ${again}`).toBe(200);
      expect(response.answer, `delivery ${again}`).toEqual({ processed: true, message: "already processed" });
    }
    // No claim of their own: the record counts what the first delivery left.
    expect(await attemptsOf()).toBe(before);
    const runs: Run[] = [];
    startWorker(async (n, ctx) => void runs.push({ id: n.id, attempt: ctx.attempt }));
    await eventually(() => runs.length >= notifications.length, 30_000, "every notification run");
    await eventually(
      async () => (await store.list!({ id: notifications[4]!.id })).items[0]?.state === "completed",
      30_000,
      "the last one completed",
    );
    expect(runs).toEqual(notifications.map((n) => ({ id: n.id, attempt: 1 })));
    // One count of attempts: the one run, attempt 1, on the completed record too.
    expect((await store.list!({ id: third.id })).items[0]).toMatchObject({ state: "completed", attempts: 1 });
  }

  /** A BullMQ queue on `store`, and a worker in this process once asked for. */
  const throughBullmq = (label: string, store: IdempotencyStore) => {
    const { queue, startWorker } = bullmqInProcess(label, prefix, store, cleanup);
    return twiceWhileWaiting(label, store, queue, startWorker);
  };

  it("memoryStore with BullMQ: answered already processed, one claim, the one run at attempt 1", async () => {
    await throughBullmq("memory", memoryStore());
  }, 60_000);

  it("postgresStore with BullMQ: the same", async () => {
    await throughBullmq("pgbullmq", postgresStore({ connection: bed.pool, schema: bed.schema }));
  }, 60_000);

  it("postgresStore with pg-boss: the same", async () => {
    const queue = pgBossQueue({ boss: bed.boss, name: "dup", schema: bed.bossSchema });
    await twiceWhileWaiting("pgboss", bed.store, queue, bedWorkerStarter(bed, "dup", cleanup));
  }, 60_000);
});
