import express from "express";
import { benchLogger, benchStore } from "./bench-options.js";
import { library } from "./library.js";
import { serve } from "./serve.js";

const { subscriptionWebhook } = await library("express");
const app = express();
app.post("/hook", subscriptionWebhook({ logger: benchLogger(), idempotency: await benchStore(), onRenew: () => {} }));
serve(app);
