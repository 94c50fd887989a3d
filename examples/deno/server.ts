import { subscriptionWebhook } from "merchant-webhooks/fetch";

// `deno serve --port 3000 --allow-net --allow-read --allow-env --allow-sys=hostname examples/deno/server.ts`
// (pino, the logger, reads the host name). In a Deno project without package.json, import from
// "npm:merchant-webhooks/fetch".
const webhook = subscriptionWebhook({
  onRenew: (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access extended");
  },
  onCancel: (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});

export default {
  fetch(request: Request): Promise<Response> | Response {
    if (new URL(request.url).pathname === "/webhooks/subscriptions") return webhook(request);
    return new Response("not found", { status: 404 });
  },
};
