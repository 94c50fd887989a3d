import { createServer } from "node:http";
import { subscriptionWebhook } from "merchant-webhooks/node";
import { httpClient, listen } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

runConformance("Node http", async (options) => {
  const handler = subscriptionWebhook(options);
  const server = await listen(createServer(handler));
  return {
    send: httpClient(server.url),
    close: async () => {
      await server.close();
      await handler.receiver.close();
    },
  };
});
