import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { type SubscriptionWebhookEnv, subscriptionWebhook } from "merchant-webhooks/hono";

// A Hono app: `bun run examples/hono/app.ts` serves it (Bun reads `port` and `fetch` off the default
// export); so does `deno serve`, and a Worker (make the middleware in the first request there).
const webhook = subscriptionWebhook({
  onRenew: (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access extended");
  },
  onCancel: (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});

/** Runs around the webhook: the accepted notification is typed on the context once it answered. */
const answered = createMiddleware<SubscriptionWebhookEnv>(async (c, next) => {
  await next();
  c.header("x-notification-id", c.var.notification?.id ?? "none");
});

const app = new Hono<SubscriptionWebhookEnv>();
app.all("/webhooks/subscriptions", answered, webhook);
app.get("/healthz", async (c) => {
  const health = await webhook.receiver.health();
  return c.json(health, health.ok ? 200 : 503);
});

export default { port: Number(process.env.PORT ?? 3000), fetch: app.fetch };
