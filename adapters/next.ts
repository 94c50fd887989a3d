/**
 * Next.js (14 to 16): route handlers for the App Router, and `pagesSubscriptionWebhook` for the Pages
 * Router.
 *
 * @example
 * ```ts
 * // app/webhooks/subscriptions/route.ts
 * import { subscriptionWebhook } from "merchant-webhooks/next";
 *
 * export const { POST } = subscriptionWebhook({ onRenew, onCancel });
 * ```
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { nodeListener } from "./http/node-listener.js";
import { webHandler } from "./http/web-request.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

// Typed structurally (Web `Request`/`Response`, Node's req/res) so this module loads no Next.js code
// and its declarations need no Next.js types; Next 14 to 16 accept these signatures.

/** An App Router route handler. */
export type RouteHandler = (request: Request) => Promise<Response>;

/** The exports of an App Router `route.ts`; re-export `POST` (and any method you want answered 405 by us). */
export interface RouteHandlers {
  POST: RouteHandler;
  GET: RouteHandler;
  PUT: RouteHandler;
  PATCH: RouteHandler;
  DELETE: RouteHandler;
  /** The core behind the handlers; `close()` waits for background writes on shutdown. */
  readonly receiver: Receiver;
}

/**
 * `export const { POST } = subscriptionWebhook({ onRenew })` in `app/.../route.ts` (App Router). The body is read
 * once from `request.body`, refused past `bodyLimit` by Content-Length or while streaming. Next
 * answers methods a route does not export with its own empty 405; export `GET` and friends too if
 * the sender should get our JSON answer instead.
 */
export function subscriptionWebhook(options: ReceiverOptions): RouteHandlers {
  const receiver = createReceiver(options);
  const handler: RouteHandler = webHandler(receiver);
  return { POST: handler, GET: handler, PUT: handler, PATCH: handler, DELETE: handler, receiver };
}

/** A Pages Router API route: Next's `NextApiRequest`/`NextApiResponse` are Node's req/res underneath. */
export interface PagesHandler {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void>;
  readonly receiver: Receiver;
}

/** Named in the 500 answer when Next's body parser consumed the body: the one-line fix, in Next's terms. */
const PAGES_BODY_PARSER_FIX =
  "turn Next's body parser off in this API route file: export const config = { api: { bodyParser: false } }";

/**
 * The Pages Router variant of `subscriptionWebhook`:
 * `export default pagesSubscriptionWebhook({ onRenew })` in `pages/api/...`, beside the literal
 * `export const config = { api: { bodyParser: false } }`, so the exact bytes reach the signature check.
 * The config is not exported from here: Next reads it statically from the route file, and Next 16
 * fails the build when it is re-exported from another module. If the body parser was left on, unsigned
 * notifications still work from the parsed body (like Express behind `express.json()`); with `verify`
 * set the answer is a 500 naming the misconfiguration.
 */
export function pagesSubscriptionWebhook(options: ReceiverOptions): PagesHandler {
  const receiver = createReceiver(options, { bodyParserFix: PAGES_BODY_PARSER_FIX });
  return Object.assign(nodeListener(receiver), { receiver });
}
