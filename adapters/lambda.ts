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
import type { ReceiverResponse } from "../src/receiver/answer-and-log.js";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../src/receiver/options.js";
import { base64ToBytes, utf8 } from "../src/verify/encoding.js";

export type { ReceiverOptions as SubscriptionWebhookOptions } from "../src/receiver/options.js";

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

/**
 * The parts of an AWS Lambda HTTP event the receiver reads, typed structurally so no `@types/aws-lambda`
 * is needed: API Gateway HTTP API (payload 2.0) and Lambda Function URLs put the method under
 * `requestContext.http`, API Gateway REST API (payload 1.0) in `httpMethod`, with headers in `headers`
 * and, for repeated ones, `multiValueHeaders`. The body is a string, base64 when `isBase64Encoded`.
 */
export interface LambdaHttpEvent {
  version?: string;
  httpMethod?: string;
  requestContext?: { http?: { method?: string } };
  headers?: Readonly<Record<string, string | undefined>> | null;
  multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  body?: string | null;
  isBase64Encoded?: boolean;
}

/** What API Gateway and Function URLs take back: the same shape for every payload version. */
export interface LambdaHttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

/** Repeated headers of a REST API event are joined as Node joins them; single ones are taken as sent. */
function headersOf(event: LambdaHttpEvent): Record<string, string | readonly string[] | undefined> {
  return { ...(event.headers ?? {}), ...(event.multiValueHeaders ?? {}) };
}

/** The body's bytes; undefined when a base64 body does not decode, which the receiver answers 400. */
function bodyOf(event: LambdaHttpEvent): Uint8Array | undefined {
  const body = event.body ?? "";
  return event.isBase64Encoded ? base64ToBytes(body.replace(/\s+/g, "")) : utf8.encode(body);
}

/**
 * Feed a Lambda HTTP event to the core. The platform has already buffered the whole body (Lambda caps
 * it at 6 MB), so the limit is checked on its decoded size.
 */
async function handleLambdaEvent(receiver: Receiver, event: LambdaHttpEvent): Promise<ReceiverResponse> {
  const method = event.requestContext?.http?.method ?? event.httpMethod ?? "GET";
  const headers = headersOf(event) as Record<string, string | string[] | undefined>;
  if (method !== "POST") return receiver.handle({ method, headers });
  const rawBody = bodyOf(event);
  if (rawBody === undefined) return receiver.reject("unreadable");
  if (rawBody.byteLength > receiver.bodyLimit) return receiver.reject("too_large");
  return receiver.handle({ method, headers, rawBody });
}

const toLambdaResult = (response: ReceiverResponse): LambdaHttpResult => ({
  statusCode: response.status,
  headers: { ...response.headers },
  body: response.body,
  isBase64Encoded: false,
});

/**
 * A complete Lambda handler around a receiver. It never rejects, since a rejection would become API
 * Gateway's own 502: a failure in here (a bug, never bad input) is logged and answered 500.
 */
function lambdaHandler(receiver: Receiver): (event: LambdaHttpEvent) => Promise<LambdaHttpResult> {
  return async (event) => {
    try {
      return toLambdaResult(await handleLambdaEvent(receiver, event));
    } catch (err) {
      return toLambdaResult(receiver.internalError(err));
    }
  };
}
