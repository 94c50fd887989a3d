/**
 * Hono (4): `subscriptionWebhook(options)` is a middleware answering the webhook route itself, the
 * accepted notification typed on the context as `c.var.notification`; `serveConsole` is a Hono app
 * for `app.route`. Runs wherever Hono does (Node, Bun, Deno, Workers): Fetch API and Web Crypto only.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { subscriptionWebhook } from "merchant-webhooks/hono";
 *
 * const app = new Hono();
 * app.post("/webhooks/subscriptions", subscriptionWebhook({ onRenew, onCancel }));
 * ```
 *
 * @module
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { ConsoleHandler } from "../src/console/console-handler.js";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import type { SubscriptionNotification } from "../src/schema/index.js";
import { answerWebRequest } from "./http/web-request.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

/**
 * What the middleware puts on the context: `new Hono<SubscriptionWebhookEnv>()` (or
 * `createMiddleware<SubscriptionWebhookEnv>`) types `c.var.notification` in middleware around it.
 */
export interface SubscriptionWebhookEnv {
  Variables: {
    /** The notification, once intake accepted it (signature, JSON and schema checked); unset otherwise. */
    notification?: SubscriptionNotification;
  };
}

/** A Hono middleware that answers every request it is given; `next` is never called. */
export interface HonoSubscriptionWebhook extends MiddlewareHandler<SubscriptionWebhookEnv> {
  /** The core behind the middleware; `close()` waits for background writes on shutdown. */
  readonly receiver: Receiver;
}

/**
 * `app.post("/hook", subscriptionWebhook({ onRenew, onCancel }))` (or `app.all`, so other methods get
 * the 405 answer). Reads `c.req.raw`'s body once within `bodyLimit`, so no middleware before it may
 * read the body (`c.req.json()`, a validator); answers the status table; sets `c.var.notification`
 * once the notification is accepted, for middleware that runs around it.
 */
export function subscriptionWebhook(options: ReceiverOptions): HonoSubscriptionWebhook {
  const receiver = createReceiver(options, {
    bodyParserFix: "read the body in no middleware before the webhook (c.req.json(), a validator)",
  });
  const middleware: MiddlewareHandler<SubscriptionWebhookEnv> = (c) =>
    answerWebRequest(receiver, c.req.raw, (notification) => c.set("notification", notification));
  return Object.assign(middleware, { receiver });
}

/**
 * `app.route("/", serveConsole(consoleHandler({ admin, authorize })))`: a Hono app answering the
 * console's pages under its `basePath`, which is the full path (mount it at `/`).
 */
export function serveConsole(handler: ConsoleHandler): Hono {
  const serve: MiddlewareHandler = (c) => handler(c.req.raw);
  return new Hono().all(handler.basePath, serve).all(`${handler.basePath}/*`, serve);
}
