import { createServer } from "node:http";
import express5 from "express";
import express4 from "express4";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { httpClient, listen } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

for (const [name, express] of [
  ["Express 5", express5],
  ["Express 4", express4 as unknown as typeof express5],
] as const) {
  runConformance(name, async (options) => {
    const app = express();
    const middleware = subscriptionWebhook(options);
    app.all("/hook", middleware);
    const server = await listen(createServer(app));
    return {
      send: httpClient(server.url),
      close: async () => {
        await server.close();
        await middleware.receiver.close();
      },
    };
  });
}
