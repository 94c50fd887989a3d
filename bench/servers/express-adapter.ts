import express from "express";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { benchLogger, benchStore } from "./bench-options.js";
import { serve } from "./serve.js";

const app = express();
app.post("/hook", subscriptionWebhook({ logger: benchLogger(), idempotency: await benchStore(), onRenew: () => {} }));
serve(app);
