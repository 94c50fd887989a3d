import type { IncomingMessage, ServerResponse } from "node:http";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { handleNodeRequest } from "./http/node-request.js";
import { writeNodeResponse } from "./http/write-node-response.js";

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
  const middleware = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void) => {
    try {
      const { response, closeConnection } = await handleNodeRequest(receiver, req);
      writeNodeResponse(res, response, closeConnection);
    } catch (err) {
      next(err);
    }
  };
  return Object.assign(middleware, { receiver });
}
