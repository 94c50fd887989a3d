import { listenNest, nestApp } from "../support/nest-app.js";
import { httpClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

// SubscriptionWebhookModule on @nestjs/platform-fastify, with Nest's own body parsers on (its default).
runConformance("Nest on Fastify", async (options) => {
  const app = await nestApp("fastify", { webhook: { path: "/hook", ...options } });
  return { send: httpClient(await listenNest(app)), close: () => app.close() };
});
