import type { Logger } from "pino";
import type { z } from "zod";
import type { FailureStatus } from "../answer/answer.js";
import type { BackpressureOptions } from "../dispatch/handler-slots.js";
import type { Handler, HandlerHooks, SubscriptionHandlers } from "../dispatch/handlers.js";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { RedactOptions } from "../logging/redact.js";
import type { OrderingOption } from "../ordering/ordering-options.js";
import type { NotificationQueue } from "../queue/queue.js";
import type { NotificationRecorder } from "../recording/recorder.js";
import type { VerifyHook } from "../verify/verify-hook.js";
import type { FingerprintKey } from "./fingerprint.js";
import type { SenderCheck } from "./intake.js";

export interface ReceiverOptions extends SubscriptionHandlers, HandlerHooks {
  /** Where claims and outcomes are kept. Default: an in-memory store (one process). */
  idempotency?: IdempotencyStore;
  /** A pino logger. Default: pino to stdout, named `merchant-webhooks`. */
  logger?: Logger;
  /** Signature check on the raw bytes; see `hmacVerifier` and `standardWebhooksVerifier`. */
  verify?: VerifyHook;
  /**
   * With several senders (per-tenant secrets), ties the verified sender to the notification: called
   * after the signature and the schema, before the id is claimed, with the notification and the request
   * headers. Return false (or throw) when the sender the signature was checked for may not send it,
   * e.g. `headers["x-tenant"] !== notification.resource.merchant_id`: the answer is 403, processed false,
   * and nothing is claimed, so one tenant cannot run another's handlers or spoil its ids and ordering.
   */
  authorizeSender?: SenderCheck;
  /**
   * Time the signature check may take, a per-tenant secret function included. Past it the answer is
   * 503 with Retry-After (the sender retries) and the log says `verify_timed_out`, so a stalled secret
   * lookup cannot pile up open connections. Default 5 s.
   */
  verifyTimeoutMs?: number;
  /**
   * Name the reason code in the 401 answer (`signature verification failed: timestamp_outside_tolerance`).
   * Off by default: the answer goes to whoever sent the request, the log line always has the reason.
   * Never includes a secret or an expected signature.
   */
  explainSignatureFailures?: boolean;
  /** Acknowledge after enqueueing, and run handlers from the queue. */
  queue?: NotificationQueue;
  /** Largest body accepted, in bytes. Default 256 KiB (a notification is a few KB). */
  bodyLimit?: number;
  /**
   * Time the whole body may take to arrive once the request is in, for adapters that read the stream.
   * Past it the answer is 408 and the connection is closed, so a body trickled a byte at a time (slowloris)
   * cannot hold a connection open (checked ten times per limit, so the answer comes within a tenth of
   * it after). Default 10 s; 0 for none.
   */
  bodyTimeoutMs?: number;
  /**
   * Time a handler may take before `ctx.signal` aborts and the answer is 500. Default 10 s. `0` (no
   * limit) only with a `queue`: without one the sender's request would stay open as long as the handler.
   */
  handlerTimeoutMs?: number;
  /** `"semantic"` (default): the status table; `200`: always HTTP 200, verdict in `processed`. */
  failureStatus?: FailureStatus;
  /** How long a claim holds before another delivery may take it over. Default 30 s. */
  leaseMs?: number;
  /** `Retry-After` seconds sent with 503 answers. Default 5. */
  retryAfterSeconds?: number;
  /** What `ctx.log` and recordings redact beyond card data. Default `{ pii: true }`. */
  redact?: RedactOptions;
  /**
   * Load shedding. Past `maxInFlight` notifications in flight (default 1000), and with `concurrency`
   * past `maxPending` requests waiting for one of `concurrency` handler slots, the receiver answers 503
   * "overloaded; retry later" with Retry-After before claiming anything, instead of queueing work it
   * cannot finish in time. The count is in each log line (`in_flight`) and in `health()`.
   */
  backpressure?: BackpressureOptions;
  /** Keep every received notification (redacted) with its answer, for replay. */
  record?: NotificationRecorder;
  /**
   * Validate bodies with this schema in place of the subscription notification's; its output's string
   * `id` is the idempotency key. Set by `eventReceiverOptions`, which also sends every event_type to one handler.
   */
  eventSchema?: z.ZodType<{ id: string }>;
  /**
   * Process one subscription's notifications one at a time, and send those older than its newest
   * completed one to `onStale` instead of their handler. `true`, or `{ key?, position? }`.
   */
  ordering?: OrderingOption;
  /**
   * With `ordering`: gets the notifications older than their subscription's newest completed one, in
   * place of their event's handler (the worker takes the same option).
   */
  onStale?: Handler;
  /**
   * Key of the payload fingerprint (an HMAC-SHA-256 of a digest of the JSON value, kept with each record to
   * tell a redelivery from another payload under the same id), at least 16 bytes. Default: a fixed,
   * public key, which keeps fingerprints stable but hides nothing. Set a secret here so that the stored
   * fingerprint is a keyed hash of the card data it covers; give every receiver sharing a store the same
   * key, and keep it while records live: a redelivery fingerprinted under another key meets 422.
   */
  fingerprintKey?: FingerprintKey;
}

export const DEFAULT_BODY_LIMIT = 256 * 1024;
export const DEFAULT_HANDLER_TIMEOUT_MS = 10_000;
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
