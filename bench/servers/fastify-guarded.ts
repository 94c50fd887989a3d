import Fastify from "fastify";
import { GUARDED_BODY_LIMIT, guardedHandWrittenRoute } from "./hand-written.js";
import { serveFastify } from "./serve.js";

// "Hand-written, same guarantees" on Fastify: its JSON parser with the body limit, then the guarded route.
const route = await guardedHandWrittenRoute();
const app = Fastify({ logger: false, bodyLimit: GUARDED_BODY_LIMIT });
app.post("/hook", async (request, reply) => {
  const { status, answer } = await route(request.body);
  return reply.code(status).send(answer);
});
await serveFastify(app);
