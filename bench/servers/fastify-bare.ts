import Fastify from "fastify";
import { serveFastify } from "./serve.js";

// The baseline: Fastify's own JSON parser and a route that answers.
const app = Fastify({ logger: false });
app.post("/hook", async (req) => ({
  processed: typeof (req.body as { id?: unknown })?.id === "string",
  message: "processed",
}));
await serveFastify(app);
