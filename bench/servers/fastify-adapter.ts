import Fastify from "fastify";
import { subscriptionWebhookPlugin } from "merchant-webhooks/fastify";
import { benchLogger, benchStore } from "./bench-options.js";
import { serveFastify } from "./serve.js";

const app = Fastify({ logger: false });
await app.register(subscriptionWebhookPlugin, { path: "/hook", logger: benchLogger(), idempotency: await benchStore(), onRenew: () => {} });
await serveFastify(app);
