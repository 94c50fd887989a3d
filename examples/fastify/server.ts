import Fastify from "fastify";
import { standardWebhooksVerifier } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/fastify";
import { pino } from "pino";

// Run with `npx tsx examples/fastify/server.ts`. The plugin reads its route's body as raw bytes; the
// app's other routes keep Fastify's JSON parser (see POST /orders).
const logger = pino({ name: "merchant-webhooks-fastify-example" });
const app = Fastify();

// Stands in for the merchant's own business logic.
const activeUntil = new Map<string, string>();

await app.register(subscriptionWebhook, {
  path: "/webhooks/subscriptions",
  // GET /healthz: 503 while the store is unreachable (see receiver.health()).
  healthPath: "/healthz",
  logger,
  // With a signing secret set, unsigned or tampered deliveries are refused with 401. The platform has not
  // published its scheme; Standard Webhooks stands in here (see docs/security.md for hmacVerifier).
  verify: process.env.WEBHOOK_SECRET ? standardWebhooksVerifier(process.env.WEBHOOK_SECRET) : undefined,
  onRenew: async (notification, ctx) => {
    const subscription = notification.resource.id ?? "unknown";
    activeUntil.set(subscription, notification.resource.period_end_time ?? "open-ended");
    ctx.log.info({ subscription, phase: notification.resource.execution_phase }, "access extended");
  },
  onCancel: async (notification, ctx) => {
    activeUntil.delete(notification.resource.id ?? "");
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});

app.post("/orders", async (request) => ({ received: request.body }));

const port = Number(process.env.PORT ?? 3000);
await app.listen({ port, host: "0.0.0.0" });
logger.info(`receiving notifications on http://localhost:${port}/webhooks/subscriptions`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // Closing the app closes the receiver, which waits for its background writes.
  process.once(signal, () => void app.close().then(() => process.exit(0)));
}
