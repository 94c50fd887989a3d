/**
 * Node's `http` (or `https`): `subscriptionWebhook(options)` is a `(req, res)` request listener.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { subscriptionWebhook } from "merchant-webhooks/node";
 *
 * createServer(subscriptionWebhook({ onRenew, onCancel })).listen(3000);
 * ```
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ConsoleHandler } from "../src/console/console-handler.js";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { serveConsoleOnNode } from "./http/console-on-node.js";
import { nodeListener } from "./http/node-listener.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

/** A request listener for `http.createServer` (or `https`, or anything handing over Node's req and res). */
export interface NodeHandler {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The core behind the handler; `close()` waits for background writes on shutdown. */
  readonly receiver: Receiver;
}

/**
 * `http.createServer(subscriptionWebhook({ onRenew }))`, or call it from your own router for one path.
 * The body is read while streaming and refused past `bodyLimit`; the returned promise never rejects.
 */
export function subscriptionWebhook(options: ReceiverOptions): NodeHandler {
  const receiver = createReceiver(options);
  return Object.assign(nodeListener(receiver), { receiver });
}

/**
 * The console (`consoleHandler` from `merchant-webhooks/console`) as a Node listener: requests under
 * its `basePath` are answered, any other gets 404. Route to it from your server, or give it its own.
 */
export function serveConsole(handler: ConsoleHandler): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (await serveConsoleOnNode(handler, req, res)) return;
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
    res.end("not found");
  };
}
