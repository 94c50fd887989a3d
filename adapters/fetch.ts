/**
 * Fetch runtimes (Hono, Bun, Deno, Cloudflare Workers): `subscriptionWebhook(options)` is a
 * `(request: Request) => Promise<Response>` handler using only Fetch API and Web Crypto globals.
 *
 * @example
 * ```ts
 * import { subscriptionWebhook } from "merchant-webhooks/fetch";
 *
 * const webhook = subscriptionWebhook({ onRenew, onCancel });
 * Bun.serve({ fetch: (request) => webhook(request) }); // Hono: app.all(path, (c) => webhook(c.req.raw))
 * ```
 *
 * @module
 */
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { webHandler } from "./http/web-request.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

/** A Web-standard handler: Hono (`c.req.raw`), Bun.serve, Deno.serve, Cloudflare Workers. */
export interface FetchHandler {
  (request: Request): Promise<Response>;
  /** The core behind the handler; `close()` waits for background writes on shutdown. */
  readonly receiver: Receiver;
}

/**
 * `const handle = subscriptionWebhook({ onRenew, onCancel })`, then `handle(request)`: answers any method
 * (405 unless POST), reads the body once within `bodyLimit`, and uses only Fetch API and Web Crypto globals.
 */
export function subscriptionWebhook(options: ReceiverOptions): FetchHandler {
  const receiver = createReceiver(options);
  return Object.assign(webHandler(receiver), { receiver });
}
