import { standardWebhooksVerifier } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/next";

// One receiver for the app, shared by the webhook route and the health route. The handler reads the
// request body itself, within its body limit, and answers { processed, message } with the status the
// platform expects.
export const webhook = subscriptionWebhook({
  // With a signing secret set, unsigned or tampered deliveries are refused with 401.
  verify: process.env.WEBHOOK_SECRET ? standardWebhooksVerifier(process.env.WEBHOOK_SECRET) : undefined,
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
