/**
 * AWS Lambda behind API Gateway (HTTP API or REST API) or a Function URL. Create the handler at module
 * scope, so a warm container keeps its receiver.
 *
 * @example
 * ```ts
 * import { subscriptionWebhook } from "merchant-webhooks/lambda";
 *
 * export const handler = subscriptionWebhook({ onRenew, onCancel });
 * ```
 *
 * @module
 */
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { type LambdaHttpEvent, type LambdaHttpResult, lambdaHandler } from "./http/lambda-event.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";
export type { LambdaHttpEvent, LambdaHttpResult } from "./http/lambda-event.js";

/** An AWS Lambda handler for API Gateway (HTTP API and REST API) and Function URL events. */
export interface LambdaHandler {
  (event: LambdaHttpEvent): Promise<LambdaHttpResult>;
  /** The core behind the handler; `close()` waits for background writes. */
  readonly receiver: Receiver;
}

/**
 * `export const handler = subscriptionWebhook({ onRenew })`. Create it at module scope, outside the
 * handler, so a warm container keeps its receiver (and its store connection) across invocations; an
 * in-memory store only spans one container, so use `redisStore` for idempotency across containers.
 */
export function subscriptionWebhook(options: ReceiverOptions): LambdaHandler {
  const receiver = createReceiver(options);
  return Object.assign(lambdaHandler(receiver), { receiver });
}
