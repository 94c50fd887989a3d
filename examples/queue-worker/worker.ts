import { closeOnSignals, createWorker } from "merchant-webhooks/bullmq";
import { pino } from "pino";

// The processing half: runs the handlers for what `receiver.ts` queued. Each notification id's handler
// completes once, whichever worker takes it and however often the platform delivers it. Run as many as
// the handlers need:
//   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/queue-worker/worker.ts
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const queueName = process.env.QUEUE_NAME ?? "subscription-notifications";
const logger = pino({ name: "webhook-worker" });

// Stands in for the merchant's own (slow) business logic: a billing system, a licence server...
const entitlementService = {
  async extend(subscription: string, until: string | undefined, signal: AbortSignal) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    signal.throwIfAborted();
    return { subscription, until };
  },
  async revoke(_subscription: string, signal: AbortSignal) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    signal.throwIfAborted();
  },
};

const worker = createWorker({
  connection: redisUrl,
  name: queueName,
  // With no `idempotency` option the worker uses redisStore on the same Redis with the default prefix:
  // the store the receivers claim in.
  concurrency: Number(process.env.CONCURRENCY ?? 20),
  logger,
  onRenew: async (notification, ctx) => {
    const subscription = notification.resource.id ?? "unknown";
    await entitlementService.extend(subscription, notification.resource.period_end_time, ctx.signal);
    ctx.log.info({ subscription }, "access extended");
  },
  onCancel: async (notification, ctx) => {
    await entitlementService.revoke(notification.resource.id ?? "unknown", ctx.signal);
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
  onUnknown: async (notification, ctx) => {
    ctx.log.warn({ event_type: notification.event_type }, "event type not handled yet; acknowledged");
  },
});

await worker.waitUntilReady();
logger.info({ queue: queueName }, "worker taking jobs");
// On SIGTERM (a deploy, a scale-down): finish running handlers for up to 20 s, then hand the rest back.
closeOnSignals(worker, { timeoutMs: 20_000 });
