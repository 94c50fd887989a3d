import { createServer } from "node:http";
import { benchLogger, benchStore } from "./bench-options.js";
import { library } from "./library.js";
import { serve } from "./serve.js";

const { subscriptionWebhook } = await library("node");
serve(createServer(subscriptionWebhook({ logger: benchLogger(), idempotency: await benchStore(), onRenew: () => {} })));
