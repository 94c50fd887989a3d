import { fileURLToPath } from "node:url";
import { createReceiver, type OrderingOptions } from "merchant-webhooks";
import { createAdmin } from "merchant-webhooks/console";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../bullmq/fixtures/spawn-worker.js";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { jobStates } from "../pg-boss/fixtures/boss.js";
import { bedWorker, laneOf } from "../pg-boss/fixtures/lane.js";
import { silentLogger } from "../support/capture-logger.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import {
  expectDiscardDrains,
  expectHeld,
  expectRedriveDrains,
  expectRedriveStale,
  expectSentWhileHeldRunsLast,
  laneHandlers,
  type PolicyLane,
  sendUntilDeadLettered,
} from "./fixtures/dead-letter-lane.js";
import { sendAll } from "./fixtures/mailbox.js";

const script = fileURLToPath(new URL("../pg-boss/fixtures/worker-process.ts", import.meta.url));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `ordering.onDeadLetter` on postgresStore through pg-boss, as dead-letter-policy.test.ts on the
 * others: four notifications of one subscription, the second failing until it is fixed, 3 attempts
 * each, two workers.
 */
describe("ordering.onDeadLetter through pg-boss on postgresStore", () => {
  const bed = pgBossBed(
    "lanes_policy",
    (
      schema,
    ) => `CREATE TABLE "${schema}".effects (seq serial PRIMARY KEY, notification_id text NOT NULL, pid int NOT NULL);
      CREATE TABLE "${schema}".started (notification_id text NOT NULL, pid int NOT NULL);
      CREATE TABLE "${schema}".broken (notification_id text PRIMARY KEY)`,
  );
  const cleanup: Array<() => Promise<unknown>> = [];
  const children: WorkerProcess[] = [];
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(children.map((child) => child.exited));
    for (const step of cleanup.reverse()) await step();
  });

  function lane(name: string, onDeadLetter: OrderingOptions["onDeadLetter"], workers = 2) {
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bed.bossSchema,
      jobOptions: { retryLimit: 2, retryDelay: 0, retryBackoff: false },
    });
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: bed.store,
      queue,
      ordering: { onDeadLetter },
    });
    cleanup.push(() => receiver.close());
    const notifications = laneOf(`SUB-${process.pid}-${name}`, 4, 9);
    const ids = notifications.map((n) => n.id);
    const second = ids[1]!;
    const handlers = laneHandlers(second);
    const startWorker = () => {
      const worker = bedWorker(bed, name, { leaseMs: 2_000, onRenew: handlers.onRenew, onStale: handlers.onStale });
      cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
      return worker;
    };
    const workerList = Array.from({ length: workers }, startWorker);
    const admin = createAdmin({ idempotency: bed.store, queue });
    const state = async (id: string) => (await bed.store.get(id))?.state;
    const key = async () => (await admin.getNotification(second))!.ordering!.key;
    const deadLettered = () =>
      eventually(
        async () =>
          (await state(second)) === "failed" &&
          (await jobStates(bed.pool, bed.bossSchema, `${name}_dead_letter`)).created === 1,
        30_000,
        "the second notification in the dead letters",
      );
    const policyLane: PolicyLane = {
      receiver,
      admin,
      notifications,
      ids,
      second,
      ...handlers,
      state,
      key,
      deadLettered,
    };
    return { ...policyLane, workers: workerList, startWorker };
  }

  it('"hold": the rest wait, neither run nor stale, shown in health(); redriven, the dead letter runs first, then the rest in order, once each', async () => {
    const held = lane("hold_redrive", "hold");
    // A while for the workers to look at the waiting jobs again: they still wait.
    await sendUntilDeadLettered(held, () => pause(1_500));
    await expectHeld(held);
    expect((await held.workers[0]!.health()).heldLanes).toBe(1);
    await expectRedriveDrains(held, () => pause(500));
  }, 60_000);

  it('"hold": one sent while the lane is held waits too, then runs last, after the redriven dead letter', async () => {
    const held = lane("hold_later", "hold");
    await sendUntilDeadLettered(held, () => pause(1_500));
    const later = laneOf(`SUB-${process.pid}-hold_later`, 5, 9)[4]!;
    // Past the workers' lease (2 s): the held lane stays held.
    await expectSentWhileHeldRunsLast(held, later, () => pause(2_500));
  }, 60_000);

  it('"hold": discarded by a person, the dead letter lets the rest run in order', async () => {
    const held = lane("hold_discard", "hold");
    const { admin, ids, second, state, key } = held;
    await sendUntilDeadLettered(held);
    expect(await admin.heldBy(await key())).toBe(second);
    // A late look at the dead letter's job (a worker that listed it ready before another dead-lettered
    // it): its claim finds the job gone and rolls back, as a worker's does. The lane stays held, the
    // dead letter as it was.
    const before = await bed.store.get(second);
    const { ordering } = (await admin.getNotification(second))!;
    const late = await bed.store.claimInTransaction({
      id: second,
      fingerprint: before!.fingerprint,
      owner: "late-look",
      leaseMs: 2_000,
      kind: "take",
      attempt: 3,
      order: { key: ordering!.key, ...(ordering!.position ? { position: ordering!.position } : {}) },
    });
    expect(late.result.status).toBe("claimed");
    await late.rollback("job_missing");
    expect(await admin.heldBy(await key())).toBe(second);
    expect(await bed.store.get(second)).toMatchObject({ state: "failed", attempts: 3, error: before!.error });
    expect(await state(ids[2]!)).toBe("queued");
    await expectDiscardDrains(held, () => pause(500));
  }, 60_000);

  it('"hold": the sweep of archived jobs leaves a held lane alone', async () => {
    const held = lane("hold_sweep", "hold", 1);
    const { admin, ids, second, broken, runs, stale, state, key, workers, startWorker } = held;
    await sendUntilDeadLettered(held);
    // pg-boss's retention passes over the held lane's jobs (the waiters' and the dead letter), still waiting.
    await bed.pool.query(
      `UPDATE "${bed.bossSchema}".job SET keep_until = now() - interval '1 second' WHERE name IN ($1, $2) AND state < 'active'`,
      ["hold_sweep", "hold_sweep_dead_letter"],
    );
    await bed.boss.maintain();
    expect((await jobStates(bed.pool, bed.bossSchema, "hold_sweep")).created ?? 0).toBe(0);
    // A worker starting sweeps the archive at once: the jobs are back, and the lane is still held.
    await workers[0]!.close({ timeoutMs: 1_000 });
    startWorker();
    await eventually(
      async () => (await jobStates(bed.pool, bed.bossSchema, "hold_sweep")).created === 2,
      10_000,
      "the waiters' jobs put back",
    );
    await pause(1_500);
    expect(runs).toEqual([ids[0], second, second, second]);
    expect(await state(ids[2]!)).toBe("queued");
    expect(await state(ids[3]!)).toBe("queued");
    expect(await admin.heldBy(await key())).toBe(second);

    broken.value = false;
    runs.length = 0;
    expect(await admin.redrive({ ids: [second] })).toMatchObject({ redriven: 1 });
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the lane to drain");
    await pause(500);
    expect(runs).toEqual([second, ids[2], ids[3]]);
    expect(stale).toEqual([]);
  }, 60_000);

  it('"hold": a worker process killed and started again during the hold; redriven, each runs once, in order', async () => {
    const { schema, bossSchema, pool } = bed;
    const name = "hold_restart";
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit: 2, retryDelay: 0, retryBackoff: false },
    });
    await queue.ready();
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: bed.store,
      queue,
      ordering: { onDeadLetter: "hold" },
    });
    cleanup.push(() => receiver.close());
    const admin = createAdmin({ idempotency: bed.store, queue });
    const notifications = laneOf(`SUB-${process.pid}-${name}`, 4, 10);
    const ids = notifications.map((n) => n.id);
    await pool.query(`INSERT INTO "${schema}".broken (notification_id) VALUES ($1)`, [ids[1]]);
    const env = {
      DATABASE_URL,
      SCHEMA: schema,
      BOSS_SCHEMA: bossSchema,
      QUEUE: name,
      CONCURRENCY: "4",
      FAIL_WHILE_BROKEN: "1",
    };
    const first = await spawnWorker(env, { script });
    children.push(first);
    const effects = async () =>
      (
        await pool.query(
          `SELECT notification_id FROM "${schema}".effects WHERE notification_id = ANY($1) ORDER BY seq`,
          [ids],
        )
      ).rows.map((row) => row.notification_id);
    const started = async (id: string) =>
      (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".started WHERE notification_id = $1`, [id])).rows[0]
        .n;
    const state = async (id: string) => (await bed.store.get(id))?.state;

    await sendAll(receiver, notifications);
    await eventually(
      async () =>
        (await state(ids[1]!)) === "failed" && (await jobStates(pool, bossSchema, `${name}_dead_letter`)).created === 1,
      30_000,
      "the second notification in the dead letters",
    );
    first.kill("SIGKILL");
    await first.exited;
    const second = await spawnWorker(env, { script });
    children.push(second);
    await pause(2_000);
    expect(await effects()).toEqual([ids[0]]);
    expect(await started(ids[1]!)).toBe(3);
    expect(await started(ids[2]!)).toBe(0);
    expect(await state(ids[2]!)).toBe("queued");
    expect(await state(ids[3]!)).toBe("queued");
    expect(await admin.heldBy((await admin.getNotification(ids[1]!))!.ordering!.key)).toBe(ids[1]);

    await pool.query(`DELETE FROM "${schema}".broken`);
    expect(await admin.redrive({ ids: [ids[1]!] })).toMatchObject({ redriven: 1 });
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the lane to drain");
    await pause(500);
    expect(await effects()).toEqual(ids);
    for (const id of ids.slice(2)) expect(await started(id)).toBe(1);
  }, 90_000);

  it('"skip": the rest run; redriven after, the dead letter is stale, as the console said', async () => {
    const skipped = lane("skip", "skip");
    const { receiver, admin, ids, second, state } = skipped;
    await sendUntilDeadLettered(skipped);
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the rest to run");
    expect((await admin.getNotification(second))?.ordering?.staleIfRedriven).toBeDefined();
    expect((await receiver.health()).heldLanes).toBe(0);
    await expectRedriveStale(skipped);
  }, 60_000);
});
