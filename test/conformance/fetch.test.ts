import { subscriptionWebhook } from "merchant-webhooks/fetch";
import { requestClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

runConformance("fetch", async (options) => {
  const handler = subscriptionWebhook(options);
  return { send: requestClient(handler), close: () => handler.receiver.close() };
});
