import { createReceiver, memoryStore, type Receiver } from "merchant-webhooks";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import pg from "pg";
import { pino } from "pino";
import { latencySummary, ms } from "./latency-stats.js";
import { JSON_HEADERS, renewalBody } from "./renewal-body.js";

/**
 * The core cost per notification of each store, in one run: the receiver with `memoryStore`,
 * `redisStore` and `postgresStore`, one notification at a time, taking turns notification by
 * notification so drift in the machine's load affects all alike. The PostgreSQL handler writes one
 * row through `ctx.transaction`, so its figure includes the merchant's own insert in the same commit;
 * `postgres_empty` is the same store with a handler that writes nothing.
 *
 *   npx tsx bench/store-latency.ts   (REDIS_URL, DATABASE_URL, STORE_LATENCY_NOTIFICATIONS to change;
 *   BENCH_BASELINE=<dist dir> adds `postgres_baseline`, the first receiver on that build: bench/build-baseline.ts)
 */
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const total = Number(process.env.STORE_LATENCY_NOTIFICATIONS ?? 3_000);
const warmUp = 500;

const tag = `mwbench_${process.pid}_${Date.now().toString(36)}`;
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
pool.on("error", () => {}); // an idle client's dropped connection must not end the run
await migrate(pool, { schema: tag });
await pool.query(`CREATE TABLE "${tag}".effects (notification_id text PRIMARY KEY)`);
const redis = redisStore({ connection: redisUrl, prefix: `${tag}:` });
const logger = pino({ level: "silent" });
const baseline = process.env.BENCH_BASELINE;
const names = ["memory", "redis", "postgres", "postgres_empty", ...(baseline ? ["postgres_baseline"] : [])] as const;
const receivers: Record<string, Receiver> = {
  memory: createReceiver({ logger, idempotency: memoryStore(), onRenew: () => {} }),
  redis: createReceiver({ logger, idempotency: redis, onRenew: () => {} }),
  postgres: createReceiver({
    logger,
    idempotency: postgresStore({ connection: pool, schema: tag }),
    onRenew: async (notification, ctx) => {
      await ctx.transaction.query(`INSERT INTO "${tag}".effects VALUES ($1)`, [notification.id]);
    },
  }),
  postgres_empty: createReceiver({
    logger,
    idempotency: postgresStore({ connection: pool, schema: tag, table: "empty_inbox" }),
    onRenew: () => {},
  }),
};
await migrate(pool, { schema: tag, table: "empty_inbox" });
if (baseline) {
  const core = (await import(`${baseline}/index.js`)) as typeof import("merchant-webhooks");
  const postgres = (await import(`${baseline}/postgres.js`)) as typeof import("merchant-webhooks/postgres");
  await postgres.migrate(pool, { schema: tag, table: "baseline_inbox" });
  receivers.postgres_baseline = core.createReceiver({
    logger,
    idempotency: postgres.postgresStore({ connection: pool, schema: tag, table: "baseline_inbox" }),
    onRenew: async (notification, ctx) => {
      await ctx.transaction.query(`INSERT INTO "${tag}".effects VALUES ($1)`, [notification.id]);
    },
  });
}
const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, [] as number[]]));

for (let i = 0; i < warmUp + total; i++) {
  for (const name of names) {
    const rawBody = renewalBody(`${name}-${i}`);
    const started = performance.now();
    const response = await receivers[name]!.handle({ method: "POST", headers: JSON_HEADERS, rawBody });
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`${name}: unexpected ${response.status} ${response.body}`);
    if (i >= warmUp) samples[name]!.push(elapsed);
  }
}

// The floor of the PostgreSQL path: one bare round trip on a pooled connection.
const pings: number[] = [];
for (let i = 0; i < warmUp + total; i++) {
  const started = performance.now();
  await pool.query("SELECT 1");
  if (i >= warmUp) pings.push(performance.now() - started);
}

const summaries = Object.fromEntries(names.map((name) => [name, latencySummary(samples[name]!)]));
console.log(
  JSON.stringify(
    {
      notifications: total,
      ...summaries,
      added_by_postgres_over_redis: {
        median_ms: ms(summaries.postgres!.median_ms - summaries.redis!.median_ms),
        p99_ms: ms(summaries.postgres!.p99_ms - summaries.redis!.p99_ms),
      },
      postgres_select_1_round_trip: latencySummary(pings),
      node: process.version,
    },
    null,
    2,
  ),
);

// Leave both servers as they were found.
await pool.query(`DROP SCHEMA "${tag}" CASCADE`);
await pool.end();
await redis.close();
