import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import type { ReceiverResponse } from "../src/answer/answer.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

export interface SubscriptionWebhookPluginOptions extends ReceiverOptions {
  /** The route's path, under any `prefix` the plugin is registered with. */
  path: string;
}

// Methods routed to the receiver so a stray GET gets our 405 answer, not Fastify's 404. HEAD comes
// with GET (Fastify's exposeHeadRoutes).
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const EMPTY = new Uint8Array(0);

const send = (reply: FastifyReply, response: ReceiverResponse) =>
  reply.code(response.status).headers(response.headers).send(response.body);

/**
 * `app.register(subscriptionWebhookPlugin, { path: "/hook", onRenew })`. An encapsulated plugin (no
 * fastify-plugin wrapper, on purpose): inside it, every content type is read as raw bytes within
 * `bodyLimit`, so the signature is checked on the exact bytes received, while the rest of the app keeps
 * its JSON parser. `app.close()` closes the receiver.
 */
export const subscriptionWebhookPlugin: FastifyPluginAsync<SubscriptionWebhookPluginOptions> = async (app, opts) => {
  const { path, ...options } = opts;
  const receiver = createReceiver(options);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: receiver.bodyLimit }, (_request, body, done) => done(null, body));
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const response = await bodyErrorAnswer(receiver, error, request);
    if (!response) throw error; // not ours: the app's own error handler answers
    return send(reply, response);
  });
  app.addHook("onClose", async () => receiver.close());

  app.route({
    method: METHODS,
    url: path,
    bodyLimit: receiver.bodyLimit,
    handler: async (request, reply) => {
      const body = request.body;
      // Fastify skips parsing when a POST declares no body; the core answers that as bad JSON.
      const rawBody = body instanceof Uint8Array ? body : request.method === "POST" ? EMPTY : undefined;
      return send(reply, await receiver.handle({ method: request.method, headers: request.headers, rawBody }));
    },
  });
};

/**
 * Our answer for the errors Fastify raises while reading the body, so the status table holds; `undefined`
 * for anything else (a hook of the app's, say), which stays the app's business.
 */
async function bodyErrorAnswer(receiver: Receiver, error: FastifyError, request: FastifyRequest): Promise<ReceiverResponse | undefined> {
  if (typeof error.code !== "string" || !error.code.startsWith("FST_ERR_CTP_")) return undefined;
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return receiver.reject("too_large");
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    // A content-type Fastify cannot even parse: the core's content-type check refuses it with our 415.
    return receiver.handle({ method: request.method, headers: request.headers, rawBody: EMPTY });
  }
  return receiver.reject("unreadable");
}
