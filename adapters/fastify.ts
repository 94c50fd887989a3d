/**
 * Fastify (5): `subscriptionWebhook` is an encapsulated plugin that reads its route's raw body itself;
 * the rest of the app keeps its JSON parser.
 *
 * @example
 * ```ts
 * import Fastify from "fastify";
 * import { subscriptionWebhook } from "merchant-webhooks/fastify";
 *
 * const app = Fastify();
 * await app.register(subscriptionWebhook, { path: "/webhooks/subscriptions", onRenew, onCancel });
 * ```
 *
 * @module
 */
import type { IncomingMessage } from "node:http";
import type { FastifyError, FastifyPluginAsync, FastifyReply } from "fastify";
import type { ConsoleHandler } from "../src/console/console-handler.js";
import type { ReceiverResponse } from "../src/receiver/answer-and-log.js";
import { createReceiver, type EarlyRejection } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { readNodeBody } from "../src/shared/read-node-body.js";
import { serveConsoleOnNode } from "./http/console-on-node.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

export interface SubscriptionWebhookPluginOptions extends ReceiverOptions {
  /** The route's path, under any `prefix` the plugin is registered with. */
  path: string;
  /** Also answer `GET healthPath` with `receiver.health()`: 200 when ok, 503 while the store or queue is down. */
  healthPath?: string;
}

// Methods routed to the receiver so a stray GET or OPTIONS gets our 405 answer, not Fastify's 404. HEAD
// comes with GET (Fastify's exposeHeadRoutes).
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const EMPTY = new Uint8Array(0);

/** Carries the reason our body parser refused a body to the plugin's error handler. */
class BodyRefused extends Error {
  constructor(readonly reason: EarlyRejection) {
    super(`webhook body refused: ${reason}`);
  }
}

const send = (reply: FastifyReply, response: ReceiverResponse, closeConnection = false) =>
  reply
    .code(response.status)
    .headers(closeConnection ? { ...response.headers, connection: "close" } : response.headers)
    .send(response.body);

/**
 * `app.register(subscriptionWebhook, { path: "/hook", onRenew })`. An encapsulated plugin (no
 * fastify-plugin wrapper, on purpose): inside it, every content type is read as raw bytes within
 * `bodyLimit` and `bodyTimeoutMs`, so the signature is checked on the exact bytes received, while the
 * rest of the app keeps its JSON parser. `app.close()` closes the receiver.
 */
export const subscriptionWebhook: FastifyPluginAsync<SubscriptionWebhookPluginOptions> = async (app, opts) => {
  // prefix, logLevel and logSerializers are Fastify's own registration options, not the receiver's.
  const {
    path,
    healthPath,
    prefix: _prefix,
    logLevel: _logLevel,
    logSerializers: _serializers,
    ...options
  } = opts as SubscriptionWebhookPluginOptions & Record<"prefix" | "logLevel" | "logSerializers", unknown>;
  const receiver = createReceiver(options);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (request, _payload, done) => {
    readNodeBody(request.raw, receiver.bodyLimit, receiver.bodyTimeoutMs).then(
      (read) =>
        read.ok
          ? done(null, read.bytes)
          : done(new BodyRefused(read.reason === "consumed" ? "body_consumed" : read.reason)),
      (err: Error) => done(err),
    );
  });
  app.setErrorHandler(async (error: FastifyError, _request, reply) => {
    const reason = bodyErrorReason(error);
    if (!reason) throw error; // not ours: the app's own error handler answers
    // The rest of a body left unread would keep the connection busy: close it with the answer.
    return send(reply, receiver.reject(reason), reason === "too_large" || reason === "body_timeout");
  });
  app.addHook("onClose", async () => receiver.close());

  if (healthPath) {
    app.get(healthPath, async (_request, reply) => {
      const health = await receiver.health();
      return reply.code(health.ok ? 200 : 503).send(health);
    });
  }

  app.route({
    method: METHODS,
    url: path,
    bodyLimit: receiver.bodyLimit,
    handler: async (request, reply) => {
      try {
        const body = request.body;
        // Fastify skips parsing when a POST declares no body; the core answers that as bad JSON.
        const rawBody = body instanceof Uint8Array ? body : request.method === "POST" ? EMPTY : undefined;
        return send(reply, await receiver.handle({ method: request.method, headers: request.headers, rawBody }));
      } catch (err) {
        return send(reply, receiver.internalError(err), true);
      }
    },
  });
};

/**
 * The reason for an error raised while reading the body, so the status table holds; `undefined` for
 * anything else (a hook of the app's, say), which stays the app's business.
 */
function bodyErrorReason(error: FastifyError): EarlyRejection | undefined {
  if (error instanceof BodyRefused) return error.reason;
  if (typeof error.code !== "string" || !error.code.startsWith("FST_ERR_CTP_")) return undefined;
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return "too_large";
  // A content-type Fastify cannot even parse.
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return "unsupported_media_type";
  return "unreadable";
}

/**
 * `app.register(serveConsole, { handler: consoleHandler({ admin, authorize }) })`: the console's pages
 * under its `basePath`. Encapsulated: inside it no body parser runs (the console reads its own forms),
 * and Fastify hands the raw request and response over.
 */
export const serveConsole: FastifyPluginAsync<{ handler: ConsoleHandler }> = async (app, opts) => {
  const { handler } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  const route = async (request: { raw: IncomingMessage; url: string }, reply: FastifyReply) => {
    reply.hijack();
    if (!(await serveConsoleOnNode(handler, request.raw, reply.raw, request.url))) {
      reply.raw.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      reply.raw.end("not found");
    }
  };
  for (const url of [handler.basePath, `${handler.basePath}/*`])
    app.route({ method: ["GET", "POST"], url, handler: route });
};
