import { fileURLToPath } from "node:url";
import { createReceiver } from "merchant-webhooks";
import { pgBossQueue, pgBossRedrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../bullmq/fixtures/spawn-worker.js";
import { silentLogger } from "../support/capture-logger.js";
import { deliveredStatus, deliverUntilAccepted, notification } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, sleep } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";
import { laneOf } from "./fixtures/lane.js";

const script = fileURLToPath(new URL("../worker-contract/worker-process.ts", import.meta.url));
/** pg-boss's shortest expiry: a job active longer than this is failed by its maintenance. */
const EXPIRE_IN_SECONDS = 1;
/** Short leases and handler limits, so a stopped worker's notification is another's within seconds. */
const LIMITS = { LEASE_MS: "1000", HANDLER_TIMEOUT_MS: "3000" };

/**
 * pg-boss fails a job left `active` past its expiry (`expireInSeconds`, 15 minutes by default) when its
 * maintenance runs: retried, or failed into the dead-letter queue. A notification's job must not be
 * lost that way, nor its record left `queued` or `processing`, when the worker running it stops
 * (SIGSTOP) or dies (SIGKILL) mid-handler past that expiry, or its handler simply outlasts it.
 */
describe("pg-boss's job expiry (expireInSeconds) while a notification runs", () => {
  const bed = pgBossBed("pgbexpire", (schema) =>
    ["started", "effects", "aborted"]
      .map(
        (table) =>
          `CREATE TABLE "${schema}".${table} (notification_id text NOT NULL, pid int NOT NULL, attempt int, at timestamptz NOT NULL DEFAULT clock_timestamp());`,
      )
      .join("\n"),
  );
  const { schema, bossSchema, pool, store } = bed;
  const children: WorkerProcess[] = [];
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const child of children) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
    await Promise.all(children.map((child) => child.exited));
    for (const step of cleanup.reverse()) await step();
  });

  const rows = async (table: "started" | "effects" | "aborted", id: string) =>
    (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".${table} WHERE notification_id = $1`, [id])).rows[0]
      .n as number;
  const effectsInOrder = async (ids: readonly string[]) =>
    (
      await pool.query(
        `SELECT notification_id FROM "${schema}".effects WHERE notification_id = ANY($1::text[]) ORDER BY at`,
        [ids],
      )
    ).rows.map((row) => row.notification_id as string);
  /** pg-boss's maintenance (expiry, then retention), as its timer runs it, every 300 ms until stopped. */
  const maintaining = () => {
    let on = true;
    const loop = (async () => {
      while (on) {
        await bed.boss.maintain();
        await sleep(300);
      }
    })();
    return async () => {
      on = false;
      await loop;
    };
  };
  /** A queue the merchant created with a job expiry of 1 s, and a receiver on it. */
  async function line(name: string, ordering = false) {
    await bed.boss.createQueue(`${name}_dead_letter`);
    await bed.boss.createQueue(name, { name, expireInSeconds: EXPIRE_IN_SECONDS, deadLetter: `${name}_dead_letter` });
    const queue = pgBossQueue({ boss: bed.boss, name, schema: bossSchema, jobOptions: { retryLimit: 2 } });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
    cleanup.push(() => receiver.close());
    const deliver = (body: object) => deliveredStatus(receiver, body);
    const spawn = async (env: Record<string, string> = {}) => {
      const child = await spawnWorker(
        {
          TRANSPORT: "pgboss-postgres",
          QUEUE: name,
          DATABASE_URL,
          SCHEMA: schema,
          BOSS_SCHEMA: bossSchema,
          ...LIMITS,
          ...env,
        },
        { script },
      );
      children.push(child);
      return child;
    };
    return { receiver, deliver, spawn };
  }
  /** Every job of `name` completed, none dead-lettered; nothing for redrive to find. */
  const expectSettled = async (name: string, jobs: number) => {
    expect(await jobStates(pool, bossSchema, name)).toEqual({ completed: jobs });
    expect(await jobStates(pool, bossSchema, `${name}_dead_letter`)).toEqual({});
    expect((await pgBossRedrive({ boss: bed.boss, name, schema: bossSchema, dryRun: true })).redriven).toEqual([]);
  };

  it("a worker stopped (SIGSTOP) mid-handler past the expiry: another runs it once; resumed, the stopped one does not", {
    timeout: 120_000,
  }, async () => {
    const { deliver, spawn } = await line("expire-frozen");
    const frozen = await spawn({ HANDLER_MS: "20000" });
    const body = notification();
    expect(await deliver(body)).toBe(200);
    const [{ expire_s }] = (
      await pool.query(
        `SELECT extract(epoch from expire_in)::int AS expire_s FROM "${bossSchema}".job WHERE name = $1`,
        ["expire-frozen"],
      )
    ).rows;
    expect(expire_s).toBe(EXPIRE_IN_SECONDS);
    await eventually(async () => (await rows("started", body.id)) === 1, 15_000, "the handler to start");
    frozen.kill("SIGSTOP");
    const stopMaintaining = maintaining();
    try {
      // Past the job's expiry, pg-boss's maintenance running all along.
      await sleep(EXPIRE_IN_SECONDS * 1_000 * 2 + 500);
      await spawn();
      await eventually(
        async () => (await store.get(body.id))?.state === "completed",
        30_000,
        "the other worker to complete it",
      );
      frozen.kill("SIGCONT");
      await eventually(async () => (await rows("aborted", body.id)) === 1, 15_000, "the resumed handler to stop");
      await sleep(1_500);
    } finally {
      await stopMaintaining();
    }
    expect(await rows("started", body.id)).toBe(2);
    expect(await rows("effects", body.id)).toBe(1);
    expect(await store.get(body.id)).toMatchObject({ state: "completed" });
    await expectSettled("expire-frozen", 1);
  });

  it("a worker killed (SIGKILL) mid-handler past the expiry: another runs it once", {
    timeout: 120_000,
  }, async () => {
    const { deliver, spawn } = await line("expire-killed");
    const doomed = await spawn({ HANDLER_MS: "20000" });
    const body = notification();
    expect(await deliver(body)).toBe(200);
    await eventually(async () => (await rows("started", body.id)) === 1, 15_000, "the handler to start");
    const stopMaintaining = maintaining();
    try {
      await sleep(EXPIRE_IN_SECONDS * 1_000 * 2 + 500);
      doomed.kill("SIGKILL");
      await doomed.exited;
      await sleep(EXPIRE_IN_SECONDS * 1_000 + 500);
      await spawn();
      await eventually(
        async () => (await store.get(body.id))?.state === "completed",
        30_000,
        "the other worker to complete it",
      );
    } finally {
      await stopMaintaining();
    }
    expect(await rows("started", body.id)).toBe(2);
    expect(await rows("effects", body.id)).toBe(1);
    await expectSettled("expire-killed", 1);
  });

  it("handlers that outlast the expiry complete once each, an ordered subscription's in position order", {
    timeout: 120_000,
  }, async () => {
    const { receiver, spawn } = await line("expire-slow", true);
    // Each handler takes 1.5 s, past the 1 s expiry, under its 3 s limit.
    await spawn({ HANDLER_MS: "1500" });
    await spawn({ HANDLER_MS: "1500" });
    const sent = laneOf(`SUB-${process.pid}-expire`, 3, 10);
    const ids = sent.map((n) => n.id);
    const stopMaintaining = maintaining();
    try {
      for (const body of sent) await deliverUntilAccepted(receiver, body, 20);
      await eventually(
        async () => (await Promise.all(ids.map((id) => store.get(id)))).every((r) => r?.state === "completed"),
        60_000,
        "the subscription to drain",
      );
      await sleep(1_000);
    } finally {
      await stopMaintaining();
    }
    expect(await effectsInOrder(ids)).toEqual(ids);
    for (const id of ids) expect(await rows("started", id)).toBe(1);
    await expectSettled("expire-slow", 3);
  });
});
