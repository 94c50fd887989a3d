import express from "express";
import { pino } from "pino";
import { subscriptionWebhook } from "merchant-webhooks/express";

// A receiver on the embedded in-memory store: one process, no Redis. `npm start` runs this file.
const logger = pino({ name: "merchant-webhooks-example" });
const app = express();

// Stands in for the merchant's own business logic.
const activeUntil = new Map<string, string>();

const webhook = subscriptionWebhook({
  logger,
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
app.post("/webhooks/subscriptions", webhook);

// For the load balancer: 503 while the store (or queue) is unreachable, when every notification would get 503 too.
app.get("/healthz", async (_req, res) => {
  const health = await webhook.receiver.health();
  res.status(health.ok ? 200 : 503).json(health);
});

const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => {
  logger.info(`receiving notifications on http://localhost:${port}/webhooks/subscriptions`);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
