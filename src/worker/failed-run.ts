// How a worker says that a notification's run failed, whichever queue runs it: one choice of level,
// outcome and message for BullMQ, pg-boss and an ordered lane's runs, each transport naming only where
// its dead letters go and how it retries.
import type { Logger } from "pino";
import { failureOutcome, type RetryDecision } from "../dispatch/retry-decision.js";
import { HandlerTimeoutError } from "../dispatch/run-claimed.js";

/** What became of a failed run: refused for good, retried when its handler asked, or failed. */
export type FailedRunFate =
  /** The handler's `NonRetriableError`: a dead letter now. */
  | { fate: "refused" }
  /** The handler's `RetryAfterError`, honoured: the next run in `retryInMs`. */
  | { fate: "retry_later"; retryInMs: number | undefined }
  /** Any other failure: retried by the queue's policy, or (`final`) a dead letter. */
  | { fate: "failed"; final: boolean }
  /** A lane's last run whose dead letter could not be written yet: it goes back in line, not failed. */
  | { fate: "unwritten" };

/** How a transport words where a failed run goes. */
export interface FailureWords {
  /** Where its dead letters go: "left in the failed set", "dead-lettered". */
  deadLettered: string;
  /** What comes of a failed run with attempts left: "will retry", "pg-boss retries it, then dead-letters it". */
  retries: string;
}

/**
 * The outcome a failed run's log line carries: `invalid` (job data that is not a notification, as
 * `invalid` says), `handler_timeout`, or the handler's steered failure (see `failureOutcome`).
 */
export function failedRunOutcome(err: unknown, invalid?: (err: unknown) => boolean): string {
  if (invalid?.(err)) return "invalid";
  if (err instanceof HandlerTimeoutError) return "handler_timeout";
  return failureOutcome(err);
}

/**
 * What became of a failed run, as its handler steered it (see `retryDecision`): refused for good, its
 * retry due in `retryInMs` when the queue honoured a `RetryAfterError` with one, else failed as any run
 * (`final`: a dead letter now).
 */
export function failedRunFate(decision: RetryDecision, retryInMs: number | undefined, final: boolean): FailedRunFate {
  if (decision.retry === "never") return { fate: "refused" };
  if (retryInMs !== undefined) return { fate: "retry_later", retryInMs };
  return { fate: "failed", final };
}

/**
 * The one log line of a failed run: error level for a notification that failed (refused, retried by
 * the queue, or a dead letter), warn for one that is only put off (its handler asked to wait, or its
 * dead letter is not written yet). `fields` carry the run's own (ids, outcome, attempt, `err`).
 */
export function logFailedRun(
  logger: Logger,
  fields: Record<string, unknown>,
  fate: FailedRunFate,
  words: FailureWords,
): void {
  switch (fate.fate) {
    case "refused":
      logger.error(fields, `notification refused by its handler (non-retriable); ${words.deadLettered}`);
      return;
    case "retry_later":
      logger.warn(
        { ...fields, retry_in_ms: fate.retryInMs },
        "notification failed; its handler asked to be retried later, and is",
      );
      return;
    case "unwritten":
      logger.warn(fields, "notification failed; its dead letter could not be written yet, retrying");
      return;
    case "failed":
      logger.error(fields, `notification failed; ${fate.final ? words.deadLettered : words.retries}`);
  }
}
