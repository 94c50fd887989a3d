import Fastify from "fastify";
import { benchLogger, benchStore } from "./bench-options.js";
import { library } from "./library.js";
import { serveFastify } from "./serve.js";

const { subscriptionWebhook } = await library("fastify");
const app = Fastify({ logger: false });
await app.register(subscriptionWebhook, {
  path: "/hook",
  logger: benchLogger(),
  idempotency: await benchStore(),
  onRenew: () => {},
});
await serveFastify(app);
