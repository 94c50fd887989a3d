import express from "express";
import pg from "pg";
import { pino } from "pino";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { migrate, postgresStore } from "merchant-webhooks/postgres";

// A receiver whose effects and notification records live in one PostgreSQL database: each renewal
// writes one ledger row, in the same transaction as the record of the notification, so a duplicate,
// a retry after a crash or two processes racing never write it twice (see README.md beside this file).
const logger = pino({ name: "merchant-webhooks-postgres-example" });
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" });
// An idle client whose connection drops (restart, failover, terminated backend) is reported on the pool:
// unheard, that error would end the process. The store listens on the clients it holds itself.
pool.on("error", (err) => logger.warn({ err }, "idle PostgreSQL client lost"));

// Deploy-time steps, here at start for a self-contained example: the inbox tables, then the merchant's own.
await migrate(pool);
await pool.query(`CREATE TABLE IF NOT EXISTS renewals (
  notification_id text PRIMARY KEY,
  subscription_id text NOT NULL,
  paid_until text,
  recorded_at timestamptz NOT NULL DEFAULT now()
)`);

const app = express();
app.post(
  "/webhooks/subscriptions",
  subscriptionWebhook({
    logger,
    idempotency: postgresStore({ connection: pool }),
    onRenew: async (notification, ctx) => {
      // Committed with the notification's record, or rolled back with it: never one without the other.
      await ctx.transaction.query(
        "INSERT INTO renewals (notification_id, subscription_id, paid_until) VALUES ($1, $2, $3)",
        [notification.id, notification.resource.id, notification.resource.period_end_time ?? null],
      );
      ctx.log.info({ subscription: notification.resource.id }, "renewal recorded");
    },
  }),
);

// How many ledger rows each notification left: always one, however often it was delivered.
app.get("/renewals", async (_req, res) => {
  const { rows } = await pool.query(
    "SELECT notification_id, count(*)::int AS rows FROM renewals GROUP BY notification_id ORDER BY 1",
  );
  res.json(rows);
});

const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => logger.info({ port }, "listening"));
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => server.close(() => void pool.end().then(() => process.exit(0))));
