import express from "express";
import { standardWebhooksVerifier } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";

// A receiver on the embedded in-memory store: one process, no Redis. `npm start` runs this file.
// Opt-ins, for running it behind the platform simulator: WEBHOOK_REDIS_URL (redisStore, with
// WEBHOOK_REDIS_PREFIX and WEBHOOK_LEASE_MS), WEBHOOK_SECRET (Standard Webhooks signatures) and
// WEBHOOK_ORDERING=1 (per-subscription order).
// Synchronous writes: a line a handler logged is on stdout before its answer is sent, so a crash
// (SIGKILL, OOM) cannot drop the evidence that the handler ran. pino's default stdout is buffered.
const logger = pino({ name: "merchant-webhooks-example" }, pino.destination({ dest: 1, sync: true }));
const app = express();
const env = process.env;
const idempotency = env.WEBHOOK_REDIS_URL
  ? redisStore({
      connection: env.WEBHOOK_REDIS_URL,
      prefix: env.WEBHOOK_REDIS_PREFIX,
      leaseMs: env.WEBHOOK_LEASE_MS ? Number(env.WEBHOOK_LEASE_MS) : undefined,
    })
  : undefined;

// Stands in for the merchant's own business logic.
const activeUntil = new Map<string, string>();

const webhook = subscriptionWebhook({
  logger,
  ...(idempotency ? { idempotency } : {}),
  ...(env.WEBHOOK_SECRET ? { verify: standardWebhooksVerifier(env.WEBHOOK_SECRET) } : {}),
  // WEBHOOK_ORDERING=1: a subscription's notifications one at a time, and older ones than applied skipped.
  ...(env.WEBHOOK_ORDERING === "1"
    ? {
        ordering: true,
        onStale: async (notification, ctx) => {
          ctx.log.info(
            { subscription: notification.resource.id, newest: ctx.previousPosition },
            "stale notification skipped",
          );
        },
      }
    : {}),
  onCreated: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "subscription created");
  },
  onRenew: async (notification, ctx) => {
    const subscription = notification.resource.id ?? "unknown";
    activeUntil.set(subscription, notification.resource.period_end_time ?? "open-ended");
    ctx.log.info({ subscription, phase: notification.resource.execution_phase }, "access extended");
  },
  onCancel: async (notification, ctx) => {
    activeUntil.delete(notification.resource.id ?? "");
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
  onSuspend: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "subscription suspended");
  },
  onResume: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "subscription resumed");
  },
});
app.all("/webhooks/subscriptions", webhook);

// For the load balancer: 503 while the store (or queue) is unreachable, when every notification would get 503 too.
app.get("/healthz", async (_req, res) => {
  const health = await webhook.receiver.health();
  res.status(health.ok ? 200 : 503).json(health);
});

const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => {
  const { port: bound } = server.address() as { port: number };
  const url = `http://localhost:${bound}/webhooks/subscriptions`;
  logger.info(`receiving notifications on ${url}`);
  logger.info(
    `send a sample: curl -X POST ${url} -H 'content-type: application/json' --data @test/fixtures/renewal.json`,
  );
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
