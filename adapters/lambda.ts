import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { respond } from "../src/receiver/answer.js";
import { handleLambdaEvent, toLambdaResult, type LambdaHttpEvent, type LambdaHttpResult } from "../src/http/lambda-event.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";
export type { LambdaHttpEvent, LambdaHttpResult } from "../src/http/lambda-event.js";

/** An AWS Lambda handler for API Gateway (HTTP API and REST API) and Function URL events. */
export interface LambdaHandler {
  (event: LambdaHttpEvent): Promise<LambdaHttpResult>;
  /** The core behind the handler; `close()` waits for background writes. */
  readonly receiver: Receiver;
}

const INTERNAL_ERROR = { processed: false, message: "internal error" };

/**
 * `export const handler = createLambdaHandler({ onRenew })`. Create it at module scope, outside the
 * handler, so a warm container keeps its receiver (and its store connection) across invocations; an
 * in-memory store only spans one container, so use `redisStore` for idempotency across containers.
 * The returned promise never rejects: a rejection would make API Gateway answer its own 502.
 */
export function createLambdaHandler(options: ReceiverOptions): LambdaHandler {
  const receiver = createReceiver(options);
  const handler = async (event: LambdaHttpEvent): Promise<LambdaHttpResult> => {
    try {
      return toLambdaResult(await handleLambdaEvent(receiver, event));
    } catch (err) {
      options.logger?.error({ err }, "webhook request failed");
      return toLambdaResult(respond(500, INTERNAL_ERROR, options.failureStatus ?? "semantic"));
    }
  };
  return Object.assign(handler, { receiver });
}
