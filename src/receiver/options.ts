// The receiver's options in one place: what each means and its default (`ReceiverOptions`), the
// keys a misspelling is checked against, the start-up checks, and their resolution into what the
// request path reads (`resolveOptions`). The handling options a queue worker shares are checked by
// `checkHandlingOptions` (src/dispatch/check-handling-options.ts), which this calls too.
import type { Logger } from "pino";
import type { z } from "zod";
import { checkHandlingOptions, nonNegative, timerMs } from "../dispatch/check-handling-options.js";
import { ALL_HANDLER_KEYS, type Handler, type HandlerHooks, type SubscriptionHandlers } from "../dispatch/handlers.js";
import type { PlatformOption } from "../dispatch/platform-handle.js";
import { memoryStore } from "../idempotency/memory-store.js";
import { isBefore, type SortablePosition, sortablePosition } from "../idempotency/position.js";
import { DEFAULT_LEASE_MS, type IdempotencyStore, type OrderClaim } from "../idempotency/store.js";
import { defaultLogger, handlerLogger, libraryLogger } from "../logging/logger.js";
import type { NotificationRecorder } from "../logging/recorder.js";
import type { RedactOptions } from "../logging/redact.js";
import type { NotificationQueue } from "../queue/queue.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import type { VerifyHook } from "../verify/verify-hook.js";
import { type FailureStatus, retryAfter } from "./answer-and-log.js";
import { type Fingerprinter, type FingerprintKey, payloadFingerprinter } from "./fingerprint.js";

/**
 * Whether the sender a delivery's signature was checked for may send this notification: `true`, or the
 * name of the tenant it is authorized as (a non-empty string); `false` (or a throw) refuses it. The
 * notification's records are kept under that tenant (with `true`, under its `resource.merchant_id`),
 * so one tenant's ids and ordering keys never meet another's.
 */
export type SenderCheck = (
  notification: SubscriptionNotification,
  headers: Readonly<Record<string, string>>,
) => boolean | string | Promise<boolean | string>;

export interface ReceiverOptions extends SubscriptionHandlers, HandlerHooks, PlatformOption {
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
/** How long a signature check (a per-tenant secret lookup included) may take by default. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 5_000;

/** The `backpressure` option: how much work a receiver takes on before it answers 503 "overloaded". */
export interface BackpressureOptions {
  /** Notifications past intake and not yet answered (claiming, running, enqueueing). Default 1000. */
  maxInFlight?: number;
  /** Handlers run at once for synchronous handling. Default: no bound but `maxInFlight`. */
  concurrency?: number;
  /** With `concurrency`: requests waiting for a handler slot. Default `concurrency * 10`. */
  maxPending?: number;
}

/**
 * Past this many notifications in flight a process is only queueing work it cannot finish in time:
 * each waits longer for its store calls and its turn on the event loop, until whole bursts time out.
 * A sender's retry later costs less than that.
 */
export const DEFAULT_MAX_IN_FLIGHT = 1000;

/** The parts of the `ordering` option, each with its default. */
export interface OrderingOptions {
  /**
   * Notifications with the same key run one at a time and never out of order. Default: the
   * subscription, `resource.merchant_id` + `resource.id`. Return undefined to leave one unordered.
   */
  key?: (notification: SubscriptionNotification) => string | undefined;
  /**
   * Where a notification stands among its key's: an RFC 3339 date-time (any offset, any fraction) or a
   * Date. Default `resource.update_time`, else `resource.create_time`. Without one (or with one that is
   * not a date-time) a notification still waits its turn, but is never stale.
   */
  position?: (notification: SubscriptionNotification) => string | Date | undefined;
  /**
   * How far ahead of this process's clock a position may be, in milliseconds. Default one day. A
   * position further ahead (a sender's wrong clock, `9999-12-31T23:59:59Z`) is not taken: the
   * notification waits its turn and runs its handler, but is never stale and does not move its key's
   * position, so it cannot make the key's real notifications stale. `Infinity` turns the check off.
   */
  maxFutureSkewMs?: number;
  /**
   * Through a durable queue, what a notification that lands in the dead letters (its attempts spent)
   * does to the rest of its key's lane. `"skip"` (default): the lane goes on; redriven after a newer
   * notification of the key completed, the dead letter is stale. `"hold"`: the rest of the lane waits,
   * neither run nor stale, until the dead letter is redriven (it runs first, then the rest in order)
   * or discarded by a person (then the rest run). See docs/ordering.md for which to choose.
   */
  onDeadLetter?: "skip" | "hold";
}

const ORDERING_KEYS = {
  key: true,
  position: true,
  maxFutureSkewMs: true,
  onDeadLetter: true,
} as const satisfies KnownKeys<OrderingOptions>;

/** One day: wider than any honest clock error, far narrower than a record's lifetime. */
export const DEFAULT_MAX_FUTURE_SKEW_MS = 86_400_000;

/** The `ordering` option: `true` for the defaults, or the parts to change. */
export type OrderingOption = boolean | OrderingOptions;

/** The `ordering` option resolved once at start-up. */
export interface Ordering {
  /** The notification's key and position, or undefined when it has no key (it is then not ordered). */
  orderOf(notification: SubscriptionNotification): OrderClaim | undefined;
  onStale: Handler | undefined;
}

/** Every option `createReceiver` (and so every adapter) takes; the compiler keeps it in step with the type. */
const NON_HANDLER_KEYS = {
  idempotency: true,
  logger: true,
  verify: true,
  authorizeSender: true,
  fingerprintKey: true,
  verifyTimeoutMs: true,
  explainSignatureFailures: true,
  queue: true,
  bodyLimit: true,
  bodyTimeoutMs: true,
  handlerTimeoutMs: true,
  failureStatus: true,
  leaseMs: true,
  retryAfterSeconds: true,
  redact: true,
  backpressure: true,
  record: true,
  eventSchema: true,
  ordering: true,
  onStale: true,
  platform: true,
} as const satisfies KnownKeys<Omit<ReceiverOptions, keyof SubscriptionHandlers | keyof HandlerHooks>>;

export const RECEIVER_OPTION_KEYS: readonly string[] = [...Object.keys(NON_HANDLER_KEYS), ...ALL_HANDLER_KEYS];

/**
 * Bytes of the smallest body the notification schema accepts:
 * `{"id":"x","event_type":"","resource":{"execution_phase":"x"}}`. A `bodyLimit` below it
 * refuses every notification with 413, which is a unit slip (KiB for bytes), never a choice.
 */
export const SMALLEST_NOTIFICATION_BYTES = 61;

/**
 * The receiver's start-up checks beyond the handling options shared with workers: misspelt keys,
 * limits that would refuse everything or hold requests forever, and ordering that cannot order.
 */
export function checkReceiverOptions(options: ReceiverOptions, what = "createReceiver"): void {
  if (options === null || typeof options !== "object") {
    throw optionError(
      new TypeError(`${what}: options must be an object of handlers and settings, got ${options}`),
      "MW_INVALID_OPTION",
      "options",
    );
  }
  rejectUnknownKeys(what, options, RECEIVER_OPTION_KEYS);
  nonNegative("bodyLimit", options.bodyLimit);
  timerMs("bodyTimeoutMs", options.bodyTimeoutMs);
  nonNegative("retryAfterSeconds", options.retryAfterSeconds);
  if (options.bodyLimit !== undefined && options.bodyLimit < SMALLEST_NOTIFICATION_BYTES) {
    throw optionError(
      new RangeError(
        `bodyLimit is ${options.bodyLimit} bytes, below the smallest valid notification (${SMALLEST_NOTIFICATION_BYTES} bytes), so every delivery would get 413. It is in bytes: for 256 KiB write 256 * 1024.`,
      ),
      "MW_INVALID_OPTION",
      "bodyLimit",
    );
  }
  if (options.verifyTimeoutMs !== undefined) {
    timerMs("verifyTimeoutMs", options.verifyTimeoutMs);
    if (options.verifyTimeoutMs === 0)
      throw optionError(
        new RangeError("verifyTimeoutMs must be above 0: a signature check needs a time limit (default 5000)"),
        "MW_INVALID_TIMEOUT",
        "verifyTimeoutMs",
      );
  }
  if (options.handlerTimeoutMs === 0 && !options.queue) {
    throw optionError(
      new RangeError(
        "handlerTimeoutMs is 0 (no limit), but without a queue the sender's request stays open as long as the handler runs. Give a limit in ms (default 10000), or run slow handlers from a queue (inProcessQueue, bullmqQueue).",
      ),
      "MW_INVALID_TIMEOUT",
      "handlerTimeoutMs",
    );
  }
  checkBackpressure(options.backpressure);
  const ordering = options.ordering;
  if (ordering && options.eventSchema && (ordering === true || ordering.position === undefined)) {
    throw optionError(
      new TypeError(
        "ordering needs a way to read each event's position: the default reads resource.update_time of a subscription notification, which an eventSchema's events need not have. Give ordering: { key, position }, each a function of the event.",
      ),
      "MW_INVALID_OPTION",
      "ordering",
    );
  }
}

function checkBackpressure(backpressure: ReceiverOptions["backpressure"]): void {
  if (backpressure === undefined) return;
  for (const key of ["maxInFlight", "concurrency", "maxPending"] as const) {
    nonNegative(`backpressure.${key}`, backpressure[key]);
  }
  // Zero would refuse every notification with 503: a slip, never a choice.
  for (const key of ["maxInFlight", "concurrency"] as const) {
    if (backpressure[key] === 0)
      throw optionError(
        new RangeError(`backpressure.${key} must be at least 1: 0 sheds every notification`),
        "MW_INVALID_OPTION",
        `backpressure.${key}`,
      );
  }
}

/** A receiver's options with every default filled in, checked once at start-up. */
export interface ResolvedOptions {
  options: ReceiverOptions;
  store: IdempotencyStore;
  logger: Logger;
  /** Base for `ctx.log`. */
  ctxLogger: Logger;
  failureStatus: FailureStatus;
  bodyLimit: number;
  bodyTimeoutMs: number;
  timeoutMs: number;
  verifyTimeoutMs: number;
  leaseMs: number;
  /** `Retry-After` for 503 answers. */
  unavailableRetry: Record<string, string>;
  /** `ordering` resolved; undefined when off. */
  ordering: Ordering | undefined;
  /** The payload fingerprint under `fingerprintKey`. */
  fingerprint: Fingerprinter;
}

export function resolveOptions(options: ReceiverOptions): ResolvedOptions {
  checkReceiverOptions(options);
  const store = options.idempotency ?? memoryStore();
  const leaseMs = options.leaseMs ?? store.leaseMs ?? DEFAULT_LEASE_MS;
  checkHandlingOptions(options, store, leaseMs);
  const logger = libraryLogger(options.logger ?? defaultLogger(), options.redact ?? {});
  return {
    options,
    store,
    logger,
    ctxLogger: handlerLogger(logger, options.redact ?? {}),
    failureStatus: options.failureStatus ?? "semantic",
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    timeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    verifyTimeoutMs: options.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS,
    leaseMs,
    unavailableRetry: retryAfter((options.retryAfterSeconds ?? 5) * 1000),
    ordering: resolveOrdering(options.ordering, options.onStale),
    fingerprint: payloadFingerprinter(options.fingerprintKey),
  };
}

/** Whether `position` lies more than `maxSkew` ms after this process's clock. */
export function isTooFarAhead(position: SortablePosition, maxSkew: number): boolean {
  if (maxSkew === Number.POSITIVE_INFINITY) return false;
  const limit = sortablePosition(new Date(Math.min(Date.now() + maxSkew, MAX_DATE_MS)));
  return limit !== undefined && isBefore(limit, position);
}

/** The last millisecond `Date` can hold: a skew beyond it means no limit in practice. */
const MAX_DATE_MS = 8.64e15;

/** `merchant_id` and `id` joined so that no two pairs meet (`:` and `%` inside them are escaped). */
// Events validated by an `eventSchema` need not carry a subscription resource: they are then unordered.
export function subscriptionKey(notification: SubscriptionNotification): string | undefined {
  const id = notification.resource?.id;
  return typeof id === "string"
    ? `${encodeURIComponent(notification.resource.merchant_id ?? "")}:${encodeURIComponent(id)}`
    : undefined;
}

export function updateOrCreateTime(notification: SubscriptionNotification): string | undefined {
  return notification.resource?.update_time ?? notification.resource?.create_time;
}

/**
 * Check and resolve `ordering` with the top-level `onStale`. Undefined when ordering is off. Throws a
 * TypeError naming the option on a wrong type or an unknown key.
 */
export function resolveOrdering(option: OrderingOption | undefined, onStale?: Handler): Ordering | undefined {
  if (option === undefined || option === false) return undefined;
  if (option !== true && (typeof option !== "object" || option === null)) {
    throw optionError(
      new TypeError("ordering must be true, false or an object { key?, position?, maxFutureSkewMs?, onDeadLetter? }"),
      "MW_INVALID_OPTION",
      "ordering",
    );
  }
  const parts: OrderingOptions = option === true ? {} : option;
  // Where it stood before 0.1.0: ignoring it would hand stale notifications to no handler in silence.
  if ("onStale" in parts)
    throw optionError(
      new TypeError("ordering.onStale: give onStale beside the other handlers (onRenew, onCancel...), not in ordering"),
      "MW_INVALID_OPTION",
      "ordering.onStale",
    );
  rejectUnknownKeys("ordering", parts, Object.keys(ORDERING_KEYS));
  for (const name of ["key", "position"] as const) {
    if (parts[name] !== undefined && typeof parts[name] !== "function")
      throw optionError(new TypeError(`ordering.${name} must be a function`), "MW_INVALID_OPTION", `ordering.${name}`);
  }
  if (onStale !== undefined && typeof onStale !== "function")
    throw optionError(new TypeError("onStale must be a function"), "MW_INVALID_OPTION", "onStale");
  const maxSkew = parts.maxFutureSkewMs ?? DEFAULT_MAX_FUTURE_SKEW_MS;
  if (typeof maxSkew !== "number" || Number.isNaN(maxSkew) || maxSkew < 0)
    throw optionError(
      new TypeError("ordering.maxFutureSkewMs must be a number of milliseconds, 0 or more (Infinity: no limit)"),
      "MW_INVALID_OPTION",
      "ordering.maxFutureSkewMs",
    );
  const onDeadLetter = parts.onDeadLetter ?? "skip";
  if (onDeadLetter !== "skip" && onDeadLetter !== "hold")
    throw optionError(
      new TypeError('ordering.onDeadLetter must be "skip" or "hold"'),
      "MW_INVALID_OPTION",
      "ordering.onDeadLetter",
    );
  const policy = onDeadLetter === "hold" ? ({ onDeadLetter } as const) : {};
  const keyOf = parts.key ?? subscriptionKey;
  const positionOf = parts.position ?? updateOrCreateTime;
  return {
    orderOf(notification) {
      const key = keyOf(notification);
      if (key === undefined) return undefined;
      const at = positionOf(notification);
      const position = at === undefined ? undefined : sortablePosition(at);
      return position === undefined || isTooFarAhead(position, maxSkew)
        ? { key, ...policy }
        : { key, position, ...policy };
    },
    onStale,
  };
}
