import { fileURLToPath } from "node:url";
import { createReceiver } from "merchant-webhooks";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../bullmq/fixtures/spawn-worker.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";

const script = fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url));
const COUNT = 300;

describe("two pg-boss worker processes, one killed mid-handler", () => {
  // No unique constraint: a notification run twice would leave two rows.
  const bed = pgBossBed(
    "pgbkill",
    (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL, pid int NOT NULL,
         at timestamptz NOT NULL DEFAULT clock_timestamp());
       CREATE TABLE "${schema}".started (notification_id text NOT NULL, pid int NOT NULL)`,
  );
  const { schema, bossSchema, pool, store } = bed;
  const children: WorkerProcess[] = [];
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(children.map((child) => child.exited));
  });

  it(`runs each of ${COUNT} notifications delivered twice exactly once, within 90 s of the kill, no job left behind`, async () => {
    const queue = pgBossQueue({ boss: bed.boss, name: "kill", schema: bossSchema });
    await queue.ready();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const env = {
      DATABASE_URL,
      SCHEMA: schema,
      BOSS_SCHEMA: bossSchema,
      QUEUE: "kill",
      HANDLER_MS: "300",
      CONCURRENCY: "5",
    };
    const [doomed, survivor] = await Promise.all([spawnWorker(env, { script }), spawnWorker(env, { script })]);
    children.push(doomed!, survivor!);

    const sent = Array.from({ length: COUNT }, () => notification());
    const statuses: number[] = [];
    // Each notification is delivered twice at once; a 409 is sent again, as the platform would.
    const deliver = async (body: Record<string, unknown>) => {
      for (;;) {
        const { status } = await receiver.handle(post(body));
        statuses.push(status);
        if (status !== 409) return status;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const sending = (async () => {
      for (let i = 0; i < sent.length; i += 20)
        await Promise.all(sent.slice(i, i + 20).flatMap((body) => [deliver(body), deliver(body)]));
    })();

    // Killed while handlers run: it has started 20, and has some started but not committed right now.
    const startedBy = async (pid: number) =>
      (
        await pool.query(
          `SELECT count(*)::int AS started, count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM "${schema}".effects e
             WHERE e.notification_id = s.notification_id))::int AS running FROM "${schema}".started s WHERE s.pid = $1`,
          [pid],
        )
      ).rows[0] as { started: number; running: number };
    await eventually(
      async () => {
        const { started, running } = await startedBy(doomed!.child.pid!);
        return started >= 20 && running > 0;
      },
      60_000,
      "the doomed worker to start 20 and be running some",
    );
    doomed!.kill("SIGKILL");
    const killedAt = Date.now();
    const killedOnServer = (await pool.query("SELECT clock_timestamp() AS at")).rows[0].at as Date;
    await doomed!.exited;
    await sending;

    const completed = async () =>
      (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".merchant_webhooks_inbox WHERE state = 'completed'`))
        .rows[0].n;
    await eventually(async () => (await completed()) === COUNT, 90_000, `all ${COUNT} records to complete`);
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(90_000);

    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    const perId = (
      await pool.query(`SELECT notification_id, count(*)::int AS n FROM "${schema}".effects GROUP BY notification_id`)
    ).rows;
    expect(perId).toHaveLength(COUNT);
    expect(perId.filter((row) => row.n !== 1)).toEqual([]);
    // The kill cut handlers off: some the doomed worker started were run (once) by the survivor.
    const { n: cutOff, rerunMs } = (
      await pool.query(
        `SELECT count(DISTINCT s.notification_id)::int AS n,
           (extract(epoch from max(e.at) - $2::timestamptz) * 1000)::int AS "rerunMs"
         FROM "${schema}".started s JOIN "${schema}".effects e ON e.notification_id = s.notification_id
         WHERE s.pid = $1 AND e.pid <> $1`,
        [doomed!.child.pid, killedOnServer],
      )
    ).rows[0];
    expect(cutOff).toBeGreaterThan(0);
    // Run again at once, not after a lease (30 s) nor pg-boss's expiry (15 min): their jobs were never committed active.
    expect(rerunMs).toBeLessThan(30_000);
    // pg-boss holds every job completed: none active, waiting or retrying.
    expect(await jobStates(pool, bossSchema, "kill")).toEqual({ completed: COUNT });
    console.log(
      `pg-boss worker kill: ${cutOff} handlers cut off and run again within ${rerunMs} ms, all ${COUNT} complete ${tookMs} ms after the kill`,
    );
    await receiver.close();
  }, 150_000);
});
