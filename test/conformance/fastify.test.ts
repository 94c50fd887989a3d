import Fastify from "fastify";
import { subscriptionWebhook } from "merchant-webhooks/fastify";
import { httpClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

runConformance("Fastify", async (options) => {
  const app = Fastify();
  await app.register(subscriptionWebhook, { path: "/hook", ...options });
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return { send: httpClient(`${address}/hook`), close: () => app.close() };
});
