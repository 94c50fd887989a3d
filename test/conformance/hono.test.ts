import { Hono } from "hono";
import { subscriptionWebhook } from "merchant-webhooks/hono";
import { requestClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

// Through Hono's own router and context, as `app.all(path, subscriptionWebhook(options))` mounts it.
runConformance("Hono", async (options) => {
  const webhook = subscriptionWebhook(options);
  const app = new Hono().all("/hook", webhook);
  return {
    send: requestClient((request) => Promise.resolve(app.fetch(request))),
    close: () => webhook.receiver.close(),
  };
});
