import type { IncomingMessage, ServerResponse } from "node:http";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { nodeListener } from "./http/node-listener.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

/** An Express (4 or 5) request handler; typed structurally so no Express types are required. */
export interface SubscriptionWebhookMiddleware {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void): Promise<void>;
  /** The core behind the middleware; `close()` waits for background writes on shutdown. */
  readonly receiver: Receiver;
}

/**
 * `app.post("/hook", subscriptionWebhook({ onRenew, onCancel }))`. Needs no body parser in front; works
 * behind `express.raw()` or `express.text()`, and behind `express.json()` for unsigned notifications.
 */
export function subscriptionWebhook(options: ReceiverOptions): SubscriptionWebhookMiddleware {
  const receiver = createReceiver(options);
  const listener = nodeListener(receiver);
  // Answers every request itself, failures included (as JSON, like every adapter), so `next` is never called.
  const middleware = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, _next: (err?: unknown) => void) => listener(req, res);
  return Object.assign(middleware, { receiver });
}
