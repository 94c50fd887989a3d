// What a failed run asks of whatever retries it: every runner (the receiver, `inProcessQueue`, the
// BullMQ and pg-boss workers) asks here and nowhere else, so a handler's `NonRetriableError` or
// `RetryAfterError` means the same on every path.
import { NonRetriableError, RetryAfterError } from "./retry-errors.js";

/**
 * `as_usual`: the runner's own policy (BullMQ's or pg-boss's attempts and back-off; the sender's retry
 * for the receiver). `never`: fail for good now, to the dead letters. `after`: the next run no sooner
 * than `delayMs` from now, as one of the attempts.
 */
export type RetryDecision = { retry: "as_usual" } | { retry: "never" } | { retry: "after"; delayMs: number };

const AS_USUAL: RetryDecision = { retry: "as_usual" };
const NEVER: RetryDecision = { retry: "never" };

/** How the failure `err` of a handler's run is to be retried. */
export function retryDecision(err: unknown): RetryDecision {
  if (err instanceof NonRetriableError) return NEVER;
  if (err instanceof RetryAfterError) return { retry: "after", delayMs: err.retryAfterMs };
  return AS_USUAL;
}

/**
 * The outcome a failed run is recorded and answered under (`OUTCOMES`), besides a time-out: the
 * record's failure reason, the log line's `outcome`, the receiver's answer.
 */
export type SteeredFailure = "handler_failed" | "handler_refused" | "handler_retry_later";

export function failureOutcome(err: unknown): SteeredFailure {
  const decision = retryDecision(err);
  return decision.retry === "never"
    ? "handler_refused"
    : decision.retry === "after"
      ? "handler_retry_later"
      : "handler_failed";
}
