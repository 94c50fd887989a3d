import { listenNest, nestApp } from "../support/nest-app.js";
import { httpClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

// SubscriptionWebhookModule on @nestjs/platform-express, with Nest's own body parsers on (its default).
runConformance("Nest on Express", async (options) => {
  const app = await nestApp("express", { webhook: { path: "/hook", ...options } });
  return { send: httpClient(await listenNest(app)), close: () => app.close() };
});
