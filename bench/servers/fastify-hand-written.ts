import Fastify from "fastify";
import { handWrittenRoute } from "./hand-written.js";
import { serveFastify } from "./serve.js";

// The hand-written reference on Fastify: its JSON parser, then the same work as the plugin.
const route = await handWrittenRoute();
const app = Fastify({ logger: false });
app.post("/hook", async (request, reply) => {
  const { status, answer } = await route(request.body);
  return reply.code(status).send(answer);
});
await serveFastify(app);
