// The two errors a handler throws to steer its retries, on every path alike: the receiver's own run,
// `inProcessQueue`, the BullMQ worker and the pg-boss worker. What each path does with them is decided
// in one place (`retry-decision.ts`); docs/queues.md#a-handler-steers-its-retries says what each answers.
import { coded, MerchantWebhooksError } from "../shared/errors.js";

export interface SteeringErrorOptions {
  /** The error that made the handler give up or wait, kept for `onError` and the log line. */
  cause?: unknown;
}

/**
 * Thrown by a handler for a notification no retry can help (a subscription the merchant has deleted,
 * a payload the business rules refuse): the run fails for good at once, without the attempts left, and
 * the notification goes to the dead letters (BullMQ's failed set, pg-boss's dead-letter queue) for a
 * person to redrive or discard. The model is BullMQ's `UnrecoverableError` and inngest's `NonRetriableError`.
 */
export class NonRetriableError extends MerchantWebhooksError {
  override name = "NonRetriableError";
  declare readonly code: "MW_NON_RETRIABLE";
  constructor(message: string, options?: SteeringErrorOptions) {
    super("MW_NON_RETRIABLE", message, options);
  }
}

/**
 * Thrown by a handler that cannot finish now but knows when to try again (a rate limit's reset, a
 * dependency's maintenance window): the run fails, and the next one starts no sooner than
 * `retryAfterMs` later instead of after the queue's back-off. It counts as one of the attempts, so a
 * handler that always asks to wait still ends in the dead letters. `retryAfter` is milliseconds from
 * now, or the time to come back at.
 */
export class RetryAfterError extends MerchantWebhooksError {
  override name = "RetryAfterError";
  declare readonly code: "MW_RETRY_AFTER";
  /** How long after the failed run the next may start, in milliseconds (0 or more). */
  readonly retryAfterMs: number;
  constructor(message: string, retryAfter: number | Date, options?: SteeringErrorOptions) {
    super("MW_RETRY_AFTER", message, options);
    const ms = retryAfter instanceof Date ? retryAfter.getTime() - Date.now() : retryAfter;
    if (typeof ms !== "number" || !Number.isFinite(ms))
      throw coded(
        new RangeError(
          `RetryAfterError: retryAfter must be a number of milliseconds or a Date; got ${String(retryAfter)}`,
        ),
        "MW_INVALID_ARGUMENT",
      );
    // A time already past means "now": the next run may start at once.
    this.retryAfterMs = Math.max(0, Math.ceil(ms));
  }
}
