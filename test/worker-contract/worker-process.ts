// A worker of the contract's transports in a child process, for tests that kill or freeze it.
// Configured by environment: TRANSPORT (bullmq-redis, pgboss-postgres, bullmq-postgres or
// bullmq-postgres-knex, whose store opens each handler's transaction through Knex), QUEUE,
// REDIS_URL, PREFIX (BullMQ's), STORE_PREFIX (redisStore's), DATABASE_URL, SCHEMA (the store's with
// postgresStore, and the tables `started`, `effects` and `aborted` on every transport), BOSS_SCHEMA,
// STALLED_INTERVAL_MS, LEASE_MS, HANDLER_TIMEOUT_MS, HANDLER_MS (time each handler takes; it stops
// waiting when ctx.signal aborts, notes an `aborted` row and writes no effect), LOG_FILE (the worker's
// log lines, as JSON). Each handler notes its start at once, outside any transaction; its effect is
// written through ctx.transaction where the store has one, as a merchant's handler would. Each row
// keeps the `ctx.attempt` the handler saw.
// Prints "ready" once it takes jobs.

import knexFactory from "knex";
import type { HandlerContext, SubscriptionNotification } from "merchant-webhooks";
import { closeOnSignals } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import { createPgBossWorker } from "merchant-webhooks/pg-boss";
import { postgresStore } from "merchant-webhooks/postgres";
import { knexTransactions } from "merchant-webhooks/postgres/knex";
import { redisStore } from "merchant-webhooks/redis";
import pg from "pg";
import { pino } from "pino";
import { startBoss } from "../pg-boss/fixtures/boss.js";
import { pause, requiredEnv } from "../support/child-process-env.js";

const env = requiredEnv;
const transport = env("TRANSPORT");
const schema = env("SCHEMA");
const handlerMs = Number(process.env.HANDLER_MS ?? 0);
const pool = new pg.Pool({ connectionString: env("DATABASE_URL"), max: 10 });
pool.on("error", () => {});
const note = (table: string, id: string, attempt: number, db: { query: pg.Pool["query"] } = pool) =>
  db.query(`INSERT INTO "${schema}".${table} (notification_id, pid, attempt) VALUES ($1, $2, $3)`, [
    id,
    process.pid,
    attempt,
  ]);

const knex =
  transport === "bullmq-postgres-knex"
    ? knexFactory({ client: "pg", connection: env("DATABASE_URL"), pool: { min: 0, max: 10 } })
    : undefined;
const orm = knex && knexTransactions(knex);
const store =
  transport === "bullmq-redis"
    ? redisStore({ connection: env("REDIS_URL"), prefix: env("STORE_PREFIX") })
    : postgresStore({ connection: pool, schema, ...(orm ? { orm } : {}) });
/** The handler's effect: through its transaction (Knex's own `trx` with the ORM), or the pool without one. */
const noteEffect = async (id: string, ctx: HandlerContext) => {
  if (orm)
    await orm
      .transactionOf(ctx)
      .raw(`INSERT INTO "${schema}".effects (notification_id, pid, attempt) VALUES (?, ?, ?)`, [
        id,
        process.pid,
        ctx.attempt,
      ]);
  else await note("effects", id, ctx.attempt, transport === "bullmq-redis" ? pool : ctx.transaction);
};

async function onRenew(notification: SubscriptionNotification, ctx: HandlerContext) {
  await note("started", notification.id, ctx.attempt);
  if (handlerMs > 0) await pause(handlerMs, ctx.signal);
  if (ctx.signal.aborted) {
    await note("aborted", notification.id, ctx.attempt);
    return;
  }
  await noteEffect(notification.id, ctx);
}

const options = {
  onRenew,
  idempotency: store,
  logger: process.env.LOG_FILE
    ? pino({ level: "info" }, pino.destination({ dest: process.env.LOG_FILE, sync: true }))
    : pino({ level: "silent" }),
  concurrency: 5,
  ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
  ...(process.env.HANDLER_TIMEOUT_MS ? { handlerTimeoutMs: Number(process.env.HANDLER_TIMEOUT_MS) } : {}),
};
const boss = transport === "pgboss-postgres" ? await startBoss(env("BOSS_SCHEMA")) : undefined;
const worker = boss
  ? createPgBossWorker({ boss, name: env("QUEUE"), schema: env("BOSS_SCHEMA"), pollingIntervalMs: 100, ...options })
  : createWorker({
      connection: env("REDIS_URL"),
      name: env("QUEUE"),
      prefix: env("PREFIX"),
      stalledInterval: Number(env("STALLED_INTERVAL_MS")),
      ...options,
    });
closeOnSignals(
  [
    worker,
    { close: async () => void (await boss?.stop({ graceful: false })) },
    { close: async () => void (await knex?.destroy()) },
    { close: () => pool.end() },
  ],
  {
    timeoutMs: 5_000,
  },
);
await worker.waitUntilReady();
process.stdout.write("ready\n");
