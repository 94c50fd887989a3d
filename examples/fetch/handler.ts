import { standardWebhooksVerifier } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/fetch";

// A Web-standard `fetch` handler: the same object runs on Bun (`bun run examples/fetch/handler.ts`),
// Deno (`deno serve`), Cloudflare Workers (`export default`), or behind Hono (`app.all(path, (c) =>
// webhook(c.req.raw))`). server.ts serves it from Node.
// Node, Bun and Deno expose `process.env`; on Workers, enable nodejs_compat or build the handler from `env`.
const secret = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.WEBHOOK_SECRET;

// One handler for the life of the process: its in-memory idempotency store must outlive each request.
export const webhook = subscriptionWebhook({
  // Verification uses Web Crypto only, so it runs wherever this handler does.
  verify: secret ? standardWebhooksVerifier(secret) : undefined,
  onRenew: async (notification, ctx) => {
    ctx.log.info(
      { subscription: notification.resource.id, phase: notification.resource.execution_phase },
      "access extended",
    );
  },
  onCancel: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});

export default {
  async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/webhooks/subscriptions") return webhook(request);
    if (pathname === "/healthz") {
      const health = await webhook.receiver.health();
      return Response.json(health, { status: health.ok ? 200 : 503 });
    }
    return new Response("not found", { status: 404 });
  },
};
