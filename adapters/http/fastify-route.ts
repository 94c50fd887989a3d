// The Fastify route of the webhook, shared by the Fastify plugin and the Nest module on
// platform-fastify: inside its encapsulation every content type is read as raw bytes within the
// receiver's limits, and every refusal is answered from the status table.
import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import type { ReceiverResponse } from "../../src/receiver/answer-and-log.js";
import type { EarlyRejection, Receiver } from "../../src/receiver/create-receiver.js";
import { readNodeBody } from "../../src/shared/read-node-body.js";

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

export interface WebhookRoute {
  path: string;
  healthPath?: string | undefined;
  /** The receiver's `bodyLimit`, known before the receiver itself where it is made later (Nest). */
  bodyLimit: number;
  /** Close the receiver with the Fastify app (default); Nest closes it with its module instead. */
  closeWithApp?: boolean;
}

/**
 * Route `path` on `app` (an encapsulated context: its content-type parsers are replaced) to the
 * receiver `receiverOf` returns at request time. `app.close()` closes the receiver.
 */
export function routeWebhook(app: FastifyInstance, route: WebhookRoute, receiverOf: () => Receiver): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (request, _payload, done) => {
    const receiver = receiverOf();
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
    return send(reply, receiverOf().reject(reason), reason === "too_large" || reason === "body_timeout");
  });
  if (route.closeWithApp !== false) app.addHook("onClose", async () => receiverOf().close());

  if (route.healthPath) {
    app.get(route.healthPath, async (_request, reply) => {
      const health = await receiverOf().health();
      return reply.code(health.ok ? 200 : 503).send(health);
    });
  }

  app.route({
    method: METHODS,
    url: route.path,
    bodyLimit: route.bodyLimit,
    handler: async (request, reply) => {
      const receiver = receiverOf();
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
}

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
