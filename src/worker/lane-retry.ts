import { retryDecision } from "../dispatch/retry-decision.js";

/** A queue's retry policy, as a lane applies it to each of its notifications: its attempts and back-off. */
export interface LaneRetryPolicy {
  /** Runs a notification gets, all told, before it is a dead letter. */
  attempts: number;
  /** The wait before the run after `runs` failed ones, as the queue would wait. */
  backoffMs(runs: number, err: unknown): Promise<number>;
}

/** What a lane does with a failed run: retried in its place after `retryInMs`, or (none) a dead letter. */
export interface LaneVerdict {
  /** The runs since its last redrive, this one included: a dead letter keeps the count. */
  runs: number;
  retryInMs?: number;
}

/**
 * The lane's verdict on a failed run of one of its notifications, its `attempt`-th all told: retried
 * in its place while attempts remain (after the handler's `RetryAfterError` delay, else the queue's
 * back-off), a dead letter after its last run or when its handler refused it (`NonRetriableError`).
 * Attempts count from its last redrive (`lanePrior`, the runs it had then), as a redriven job's do.
 */
export async function laneVerdict(
  err: unknown,
  attempt: number,
  lanePrior: unknown,
  policy: LaneRetryPolicy,
): Promise<LaneVerdict> {
  const prior = typeof lanePrior === "number" ? lanePrior : 0;
  const runs = Math.max(1, attempt - prior);
  const decision = retryDecision(err);
  if (decision.retry === "never" || runs >= policy.attempts) return { runs };
  return { runs, retryInMs: decision.retry === "after" ? decision.delayMs : await policy.backoffMs(runs, err) };
}
