import { closeOnSignals } from "merchant-webhooks";
import { createPgBossWorker } from "merchant-webhooks/pg-boss";
import { postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import PgBoss from "pg-boss";
import { pino } from "pino";

// Works the queue receiver.ts fills. Each renewal writes one ledger row through ctx.transaction: the row,
// the notification's record and the pg-boss job commit in one transaction, so a worker killed
// mid-handler leaves nothing, and another worker runs the notification again at once.
const logger = pino({ name: "merchant-webhooks-pg-boss-worker" });
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const concurrency = 10;
const pool = new pg.Pool({ connectionString: url, max: concurrency + 5 });
// An idle client's error (a restarted server) is emitted on the pool: without a listener it ends the process.
pool.on("error", (err) => logger.warn({ err }, "pg pool error"));
await pool.query(`CREATE TABLE IF NOT EXISTS pg_boss_renewals (
  notification_id text NOT NULL,
  subscription_id text NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
)`);
const boss = new PgBoss(url);
boss.on("error", (err) => logger.warn({ err }, "pg-boss error"));
await boss.start();

const worker = createPgBossWorker({
  boss,
  name: process.env.QUEUE_NAME ?? "subscription-notifications",
  idempotency: postgresStore({ connection: pool }),
  logger,
  concurrency,
  onRenew: async (notification, ctx) => {
    await ctx.transaction.query("INSERT INTO pg_boss_renewals (notification_id, subscription_id) VALUES ($1, $2)", [
      notification.id,
      notification.resource.id,
    ]);
    ctx.log.info({ subscription: notification.resource.id }, "renewal recorded");
  },
  onCancel: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});
await worker.waitUntilReady();
logger.info("working");
closeOnSignals([worker, { close: () => boss.stop() }, { close: () => pool.end() }]);
