import express from "express";
import { bullmqQueue, closeOnSignals } from "merchant-webhooks/bullmq";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";

// The receiving half: validate, claim the id, put the notification on the queue, answer 200. No
// handler runs here, so the answer takes a few Redis round trips however slow the handlers are.
// Run any number of these behind a load balancer, beside any number of `worker.ts`, on one Redis:
//   REDIS_URL=redis://127.0.0.1:6379 PORT=3000 npx tsx examples/queue-worker/receiver.ts
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const queueName = process.env.QUEUE_NAME ?? "subscription-notifications";
const logger = pino({ name: "webhook-receiver" });

const webhook = subscriptionWebhook({
  logger,
  // Receivers and workers must share the store: the worker takes over the record the receiver claimed.
  idempotency: redisStore({ connection: redisUrl }),
  queue: bullmqQueue({ connection: redisUrl, name: queueName }),
});

const app = express();
app.all("/webhooks/subscriptions", webhook);
// 503 while Redis is unreachable, so the load balancer stops routing notifications that could only get 503.
app.get("/healthz", async (_req, res) => {
  const health = await webhook.receiver.health();
  res.status(health.ok ? 200 : 503).json(health);
});

const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, () => logger.info({ port, queue: queueName }, "receiver listening"));

// On SIGTERM: stop accepting connections, let requests in flight be answered, then close the queue.
closeOnSignals([{ close: () => new Promise<void>((resolve) => server.close(() => resolve())) }, webhook.receiver], {
  timeoutMs: 10_000,
});
