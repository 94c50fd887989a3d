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
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import type { ConsoleHandler } from "../src/console/console-handler.js";
import { createReceiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { serveConsoleOnNode } from "./http/console-on-node.js";
import { routeWebhook } from "./http/fastify-route.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

export interface SubscriptionWebhookPluginOptions extends ReceiverOptions {
  /** The route's path, under any `prefix` the plugin is registered with. */
  path: string;
  /** Also answer `GET healthPath` with `receiver.health()`: 200 when ok, 503 while the store or queue is down. */
  healthPath?: string;
}

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
  routeWebhook(app, { path, healthPath, bodyLimit: receiver.bodyLimit }, () => receiver);
};

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
