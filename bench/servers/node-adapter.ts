import { createServer } from "node:http";
import { benchLogger, benchStore } from "./bench-options.js";
import { library } from "./library.js";
import { serve } from "./serve.js";

const { createNodeHandler } = await library("node");
serve(createServer(createNodeHandler({ logger: benchLogger(), idempotency: await benchStore(), onRenew: () => {} })));
