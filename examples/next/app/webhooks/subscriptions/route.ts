import { standardWebhooksVerifier } from "merchant-webhooks";
import { createRouteHandler } from "merchant-webhooks/next";

// POST /webhooks/subscriptions. The handler reads the request body itself, within its body limit,
// and answers { processed, message } with the status the platform expects.
const webhook = createRouteHandler({
  // With a signing secret set, unsigned or tampered deliveries are refused with 401.
  verify: process.env.WEBHOOK_SECRET ? standardWebhooksVerifier(process.env.WEBHOOK_SECRET) : undefined,
  onRenew: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id, phase: notification.resource.execution_phase }, "access extended");
  },
  onCancel: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});

// GET is exported too so a stray GET gets the library's JSON 405 rather than Next's empty one.
export const { POST, GET } = webhook;
