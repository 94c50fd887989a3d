// The console's list pages at N records (default 1,000,000) on postgresStore and on redisStore, every
// filter: `npx tsx bench/console-list.ts [N]` (CONSOLE_LIST_STORES=postgres,redis; medians of 5).
// Records are written in bulk as the stores' own scripts and statements write them (every 100th
// failed, every 50th processing, four event types, 50 subscriptions, one change a millisecond), on
// PostgreSQL with generate_series then analyzed as autovacuum would, on Redis by a script 10,000 at a
// call (each hash expires within the hour, should the run die). No queue: every record keeps its
// event type and subscription, so a page reads the store alone. Every filter is read once before the
// timing (warm-up). EXPLAIN=1 prints each PostgreSQL page's plan.
import os from "node:os";
import { Redis } from "ioredis";
import pg from "pg";
import { createAdmin, type NotificationListOptions } from "../src/console/admin.js";
import type { IdempotencyStore } from "../src/idempotency/store.js";
import { migrate, postgresStore } from "../src/postgres/index.js";
import { listStatements } from "../src/postgres/list-sql.js";
import { qualifiedNames } from "../src/postgres/names.js";
import { redisStore } from "../src/redis/index.js";

const N = Number(process.argv[2] ?? process.env.CONSOLE_LIST_RECORDS ?? 1_000_000);
const stores = (process.env.CONSOLE_LIST_STORES ?? "postgres,redis").split(",");
const ROUNDS = 5;
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const types = ["SUBSCRIPTION_RENEW", "SUBSCRIPTION_CANCELLED", "SUBSCRIPTION_CREATED", "SUBSCRIPTION_SUSPENDED"];
const start = Date.now() - 60_000;
const filters: Record<string, NotificationListOptions> = {
  none: {},
  state_failed: { state: "failed" },
  event_type: { eventType: "SUBSCRIPTION_SUSPENDED" },
  subscription: { subscriptionId: "SUB-7" },
  until_time: { until: start - N / 2 },
  since_time: { since: start - N / 2 },
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Each filter's first page (50) through the admin API, and the page after it: medians of ROUNDS, ms. */
async function timePages(store: IdempotencyStore): Promise<Record<string, { first: number; next: number }>> {
  const admin = createAdmin({ idempotency: store });
  const timings: Record<string, { first: number; next: number }> = {};
  for (const filter of Object.values(filters)) await admin.listNotifications({ ...filter, limit: 50 });
  for (const [name, filter] of Object.entries(filters)) {
    const first: number[] = [];
    const next: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let t = performance.now();
      const page = await admin.listNotifications({ ...filter, limit: 50 });
      first.push(performance.now() - t);
      if (page.items.length !== 50) throw new Error(`${name}: ${page.items.length} lines, not 50`);
      t = performance.now();
      await admin.listNotifications({ ...filter, limit: 50, cursor: page.cursor! });
      next.push(performance.now() - t);
    }
    timings[name] = { first: Math.round(median(first) * 10) / 10, next: Math.round(median(next) * 10) / 10 };
    console.error(`${name}: first page ${timings[name]!.first} ms, next ${timings[name]!.next} ms`);
  }
  return timings;
}

async function onPostgres() {
  const schema = `mw_pgspeed_consolebench_${process.pid}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    await migrate(pool, { schema });
    const built = performance.now();
    await pool.query(
      `INSERT INTO "${schema}".merchant_webhooks_inbox
         (id, fingerprint, state, attempts, answer, owner, lease_until, updated_at, event_type, subscription_id)
       SELECT 'WH-' || i, 'fp', CASE WHEN i % 100 = 0 THEN 'failed' WHEN i % 50 = 1 THEN 'processing' ELSE 'completed' END, 1,
         CASE WHEN i % 100 = 0 OR i % 50 = 1 THEN NULL ELSE '{"processed":true,"message":"processed"}'::jsonb END,
         'o', CASE WHEN i % 50 = 1 THEN now() + interval '1 hour' END,
         timestamptz 'epoch' + ($2::float8 - i) * interval '1 millisecond',
         ($3::text[])[1 + i % 4], 'SUB-' || (i % 50)
       FROM generate_series(1, $1) i`,
      [N, start, types],
    );
    await pool.query(`ANALYZE "${schema}".merchant_webhooks_inbox`);
    console.error(`postgres: ${N} records written in ${Math.round(performance.now() - built)} ms`);
    if (process.env.EXPLAIN) {
      const statements = listStatements(qualifiedNames({ schema }), 604800);
      for (const [name, statement, at, value] of [
        ["state failed", statements.byState, 0, "failed"],
        ["event type", statements.byEventType, 8, types[3]],
        ["subscription", statements.bySubscription, 9, "SUB-7"],
      ] as const) {
        const values: unknown[] = [null, null, null, null, null, null, 51, null, null, null];
        values[at] = value;
        const { rows } = await pool.query(`EXPLAIN ANALYZE ${statement}`, values);
        console.error(`-- ${name}\n${rows.map((row) => row["QUERY PLAN"]).join("\n")}`);
      }
    }
    return await timePages(postgresStore({ connection: pool, schema }));
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
}

async function onRedis() {
  const prefix = `mw:pgspeed:consolebench:${process.pid}:`;
  const redis = new Redis(redisUrl);
  const base = `${prefix}{all}`;
  const sets = [":time-index", ...["processing", "completed", "failed"].map((s) => `:state:${s}`)];
  sets.push(...types.map((type) => `:type:${type}`));
  for (let s = 0; s < 50; s++) sets.push(`:sub:SUB-${s}`);
  const store = redisStore({ connection: redisUrl, prefix });
  try {
    const built = performance.now();
    // Written by the server itself, 10,000 records a call: what the stores' scripts leave behind.
    const fill = `local base, from, to, start, answer = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local types = {'${types.join("', '")}'}
for i = from, to do
  local key = ARGV[6] .. 'WH-' .. i
  local state = (i % 100 == 0) and 'failed' or ((i % 50 == 1) and 'processing' or 'completed')
  local at, event_type, sub = start - i, types[1 + i % 4], 'SUB-' .. (i % 50)
  redis.call('HSET', key, 'state', state, 'fingerprint', 'fp', 'owner', 'o', 'attempts', 1, 'eventType', event_type, 'subscriptionId', sub)
  if state == 'completed' then redis.call('HSET', key, 'answer', answer) end
  if state == 'failed' then redis.call('HSET', key, 'error', 'handler_failed') end
  if state == 'processing' then redis.call('HSET', key, 'leaseUntil', start + 3600000) end
  redis.call('PEXPIRE', key, 3600000)
  redis.call('ZADD', base .. ':time-index', at, key)
  redis.call('ZADD', base .. ':state:' .. state, at, key)
  redis.call('ZADD', base .. ':type:' .. event_type, at, key)
  redis.call('ZADD', base .. ':sub:' .. sub, at, key)
end
return 0`;
    const answer = JSON.stringify({ processed: true, message: "processed" });
    for (let from = 1; from <= N; from += 10_000)
      await redis.eval(fill, 0, base, from, Math.min(from + 9_999, N), start, answer, prefix);
    for (const set of sets) await redis.pexpire(`${base}${set}`, 3_600_000);
    console.error(`redis: ${N} records written in ${Math.round(performance.now() - built)} ms`);
    return await timePages(store);
  } finally {
    await store.close();
    for (const set of sets) await redis.unlink(`${base}${set}`);
    for (let from = 1; from <= N; from += 10_000) {
      const keys = [];
      for (let i = from; i < Math.min(from + 10_000, N + 1); i++) keys.push(`${prefix}WH-${i}`);
      await redis.unlink(...keys);
    }
    redis.disconnect();
  }
}

const load_before = os.loadavg();
const result: Record<string, unknown> = { records: N, rounds: ROUNDS, page: 50 };
if (stores.includes("postgres")) result.postgres = await onPostgres();
if (stores.includes("redis")) result.redis = await onRedis();
console.log(JSON.stringify({ ...result, load_before, load_after: os.loadavg() }, null, 2));
