// The console's list pages on postgresStore with a pg-boss queue, at N records (default 100,000):
// `npx tsx bench/console-list.ts [N]`, medians of 3. Records and jobs are written in bulk (every
// 100th failed, four event types, 50 subscriptions), then analyzed as autovacuum would. EXPLAIN=1
// prints the plan of an unfiltered page.
import pg from "pg";
import PgBoss from "pg-boss";
import { createAdmin } from "../src/console/admin.js";
import { pgBossQueue } from "../src/pg-boss/index.js";
import { migrate, postgresStore } from "../src/postgres/index.js";

const N = Number(process.argv[2] ?? 100_000);
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `mw_consolebench_${process.pid}`;
const pool = new pg.Pool({ connectionString: url, max: 4 });
await migrate(pool, { schema });
const boss = new PgBoss({ connectionString: url, schema: `${schema}_boss`, schedule: false, supervise: false, max: 4 });
boss.on("error", () => {});
await boss.start();
const queue = pgBossQueue({ boss, name: "bench", schema: `${schema}_boss` });
await queue.ready();
const store = postgresStore({ connection: pool, schema });
const types = ["SUBSCRIPTION_RENEW", "SUBSCRIPTION_CANCELLED", "SUBSCRIPTION_CREATED", "SUBSCRIPTION_SUSPENDED"];
try {
  // Records and their jobs in bulk: completed records, every 100th failed; one job each.
  await pool.query(
    `INSERT INTO "${schema}".merchant_webhooks_inbox (id, fingerprint, state, attempts, answer, updated_at)
     SELECT 'WH-' || i, 'fp', CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'completed' END, 1,
       CASE WHEN i % 100 = 0 THEN NULL ELSE '{"processed":true,"message":"processed"}'::jsonb END,
       now() - (i || ' ms')::interval
     FROM generate_series(1, $1) i`,
    [N],
  );
  const jobs = [];
  for (let i = 1; i <= N; i++)
    jobs.push({
      name: "bench",
      id: queue.jobIdFor(`WH-${i}`),
      data: {
        id: `WH-${i}`,
        event_type: types[i % 4],
        notification: { resource: { id: `SUB-${i % 50}` } },
        headers: {},
        receivedAt: 0,
        fingerprint: "fp",
      },
    });
  for (let i = 0; i < jobs.length; i += 1000) await boss.insert(jobs.slice(i, i + 1000));
  await pool.query(`ANALYZE "${schema}".merchant_webhooks_inbox`);
  const admin = createAdmin({ idempotency: store, queue });
  const time = async (label: string, f: () => Promise<unknown>) => {
    const runs: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t = performance.now();
      await f();
      runs.push(performance.now() - t);
    }
    runs.sort((a, b) => a - b);
    console.log(`${label}: median ${runs[1]!.toFixed(1)} ms`);
  };
  if (process.env.EXPLAIN) {
    const { listStatement } = await import("../src/postgres/list-sql.js");
    const { qualifiedNames } = await import("../src/postgres/names.js");
    const sql = listStatement(qualifiedNames({ schema }), 604800);
    const { rows } = await pool.query(`EXPLAIN ANALYZE ${sql}`, [null, null, null, null, null, null, 51, null]);
    console.log(rows.map((row) => row["QUERY PLAN"]).join("\n"));
  }
  await time("store.list alone, no filter", async () => store.list!({ limit: 50 }));
  const page = await store.list!({ limit: 50 });
  await time("queue.jobs.about alone, 50 ids", () => queue.jobs.about(page.items.map((item) => item.id)));
  await time("page, no filter", () => admin.listNotifications({ limit: 50 }));
  await time("page, state failed", () => admin.listNotifications({ state: "failed", limit: 50 }));
  await time("page, event type", () => admin.listNotifications({ eventType: "SUBSCRIPTION_SUSPENDED", limit: 50 }));
  await time("page, subscription", () => admin.listNotifications({ subscriptionId: "SUB-7", limit: 50 }));
  await time("page, until (time)", () => admin.listNotifications({ until: Date.now() - N / 2, limit: 50 }));
  await time("overview (1,000 sampled)", () => admin.overview());
} finally {
  await boss.stop({ graceful: false });
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_boss" CASCADE`);
  await pool.end();
}
