/**
 * Express (4 and 5): `subscriptionWebhook(options)` is a middleware that reads the raw body itself, so
 * mount it before any body parser.
 *
 * @example
 * ```ts
 * import express from "express";
 * import { subscriptionWebhook } from "merchant-webhooks/express";
 *
 * const app = express();
 * app.all("/webhooks/subscriptions", subscriptionWebhook({ onRenew, onCancel }));
 * app.use(express.json()); // the rest of your app's parsers come after it
 * ```
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { ConsoleHandler } from "../src/console/console-handler.js";
import { OUTCOMES } from "../src/dispatch/outcomes.js";
import { type FailureStatus, type ReceiverResponse, respond } from "../src/receiver/answer-and-log.js";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { rejectUnknownKeys } from "../src/shared/option-keys.js";
import { serveConsoleOnNode } from "./http/console-on-node.js";
import { nodeListener, writeNodeResponse } from "./http/node-listener.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

/** An Express (4 or 5) request handler; typed structurally so no Express types are required. */
export interface SubscriptionWebhookMiddleware {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void): Promise<void>;
  /** The core behind the middleware; `close()` waits for background writes on shutdown. */
  readonly receiver: Receiver;
}

/**
 * `app.all("/hook", subscriptionWebhook({ onRenew, onCancel }))`. Needs no body parser in front; works
 * behind `express.raw()` or `express.text()`, and behind `express.json()` for unsigned notifications.
 */
export function subscriptionWebhook(options: ReceiverOptions): SubscriptionWebhookMiddleware {
  const receiver = createReceiver(options, {
    bodyParserFix: "mount the webhook before app.use(express.json()) or any other body parser",
  });
  const listener = nodeListener(receiver);
  // Answers every request itself, failures included (as JSON, like every adapter), so `next` is never called.
  const middleware = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, _next: (err?: unknown) => void) =>
    listener(req, res);
  return Object.assign(middleware, { receiver });
}

export interface BodyParserErrorHandlerOptions {
  /** As given to `subscriptionWebhook`; default `"semantic"`. */
  failureStatus?: FailureStatus;
  /** Warned about each refusal, since its cause is a body parser mounted before the webhook. */
  logger?: Pick<Logger, "warn">;
}

/**
 * An Express error middleware for apps that mount `express.json()` (or another body parser) before the
 * webhook: a body it refuses (bad JSON, over its own 100 KB default limit, an unsupported charset) is
 * answered as the receiver answers it, JSON `{ processed: false, message }`, instead of Express's HTML
 * error page. Mount it on the webhook's path after the routes:
 * `app.use("/webhooks/subscriptions", bodyParserErrorHandler())`. Other errors pass on to `next`.
 */
export function bodyParserErrorHandler(options: BodyParserErrorHandlerOptions = {}) {
  rejectUnknownKeys("bodyParserErrorHandler", options, [
    "failureStatus",
    "logger",
  ] satisfies (keyof BodyParserErrorHandlerOptions)[]);
  // Four parameters: Express recognises an error middleware by its arity.
  return (err: unknown, _req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void => {
    if (!isBodyParserError(err) || res.headersSent) {
      next(err);
      return;
    }
    const response = bodyParserAnswer(err, options.failureStatus ?? "semantic");
    options.logger?.warn(
      { type: err.type, status: response.status },
      "a body parser in front of the webhook refused the request; mount the webhook before any body parser",
    );
    writeNodeResponse(res, response);
  };
}

/**
 * `app.use(serveConsole(consoleHandler({ admin, authorize })))`: the console under its `basePath`;
 * other paths go on to `next`. Mount it before any body parser, or behind `express.urlencoded()`.
 */
export function serveConsole(handler: ConsoleHandler) {
  return (
    req: IncomingMessage & { body?: unknown; originalUrl?: string },
    res: ServerResponse,
    next: (err?: unknown) => void,
  ): void => {
    serveConsoleOnNode(handler, req, res, req.originalUrl ?? req.url).then((served) => served || next(), next);
  };
}

/** An error from body-parser or raw-body (`express.json()`, `express.text()`, ...), as they describe it. */
interface BodyParserError {
  type: string;
  status: number;
  /** The parser's size limit, on `entity.too.large`. */
  limit?: number;
}

// The request-side errors body-parser and raw-body raise (stream misuse, a 500, is left to the app).
const REQUEST_ERRORS = new Set([
  "entity.parse.failed",
  "entity.too.large",
  "entity.verify.failed",
  "charset.unsupported",
  "encoding.unsupported",
  "request.aborted",
  "request.size.invalid",
  "parameters.too.many",
]);

function isBodyParserError(err: unknown): err is BodyParserError {
  const candidate = err as Partial<BodyParserError> | null;
  return (
    typeof candidate?.type === "string" && REQUEST_ERRORS.has(candidate.type) && typeof candidate.status === "number"
  );
}

/**
 * The answer the receiver would have given for what a body parser in front of it refused, so the
 * sender gets `{ processed: false, message }` JSON rather than the framework's HTML error page.
 */
function bodyParserAnswer(err: BodyParserError, failureStatus: FailureStatus): ReceiverResponse {
  const fail = (status: number, message: string) => respond(status, { processed: false, message }, failureStatus);
  switch (err.type) {
    case "entity.parse.failed":
      return fail(400, "body is not valid JSON");
    case "entity.too.large":
      return fail(
        413,
        err.limit === undefined ? OUTCOMES.too_large.message : `body exceeds the limit of ${err.limit} bytes`,
      );
    case "charset.unsupported":
    case "encoding.unsupported":
      return fail(415, OUTCOMES.unsupported_media_type.message);
    default:
      return fail(err.status >= 400 && err.status < 500 ? err.status : 400, "request body could not be read");
  }
}
