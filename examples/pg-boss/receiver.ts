import express from "express";
import { closeOnSignals } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import PgBoss from "pg-boss";
import { pino } from "pino";

// A receiver that answers at once and leaves the work to pg-boss workers (worker.ts), with nothing but
// PostgreSQL: the notification's record and its job commit together, before the 200.
const logger = pino({ name: "merchant-webhooks-pg-boss-receiver" });
const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const pool = new pg.Pool({ connectionString: url });
// An idle client's error (a restarted server) is emitted on the pool: without a listener it ends the process.
pool.on("error", (err) => logger.warn({ err }, "pg pool error"));
const boss = new PgBoss(url);
boss.on("error", (err) => logger.warn({ err }, "pg-boss error"));
await boss.start(); // creates pg-boss's schema on first start
await migrate(pool); // the inbox tables; a deploy step in a real service

const webhook = subscriptionWebhook({
  logger,
  idempotency: postgresStore({ connection: pool }),
  queue: pgBossQueue({ boss, name: process.env.QUEUE_NAME ?? "subscription-notifications" }),
});
const app = express();
app.post("/webhooks/subscriptions", webhook);
app.get("/healthz", async (_req, res) => {
  const health = await webhook.receiver.health();
  res.status(health.ok ? 200 : 503).json(health);
});
const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => logger.info({ port }, "listening"));
closeOnSignals([
  { close: () => new Promise<void>((resolve) => server.close(() => resolve())) },
  webhook.receiver,
  { close: () => boss.stop() },
  { close: () => pool.end() },
]);
