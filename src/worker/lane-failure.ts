// The failure policy of an ordered lane, whichever queue runs it: a failed run with attempts left goes
// back in line at its place for its retry (the lane waits for it), its last run is a dead letter where
// every redrive path finds it (the lane goes on, or with `lanes.fail` holds), and a dead letter that
// could not be written leaves the record in line rather than failed. The queue gives only its retry
// policy and how it writes a dead letter for a notification that has no job of its own.
import type { Logger } from "pino";
import type { SteeredFailure } from "../dispatch/retry-decision.js";
import { HandlerTimeoutError } from "../dispatch/run-claimed.js";
import { type ClaimedOrStale, drainedLanes, type IdempotencyStore } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import type { RedactOptions } from "../logging/redact.js";
import { redactErrorInPlace } from "../logging/redact-error.js";
import { type FailedRunFate, type FailureWords, logFailedRun } from "./failed-run.js";
import type { NotificationJob, NotificationJobData } from "./job-data.js";
import { type LaneRetryPolicy, laneVerdict } from "./lane-retry.js";
import { requeuesInLane, type TransactionFailurePolicy } from "./lane-transaction.js";
import { STORE_RETRY_MS } from "./recheck-delay.js";

/** What a lane's failure policy needs from the queue that runs the lane. */
export interface LaneQueue {
  /** The lane's retry policy: its drain job's attempts and back-off. */
  readonly policy: LaneRetryPolicy;
  /** How its log lines say where a lane's failed run goes (retried in its lane, not by the queue). */
  readonly words: FailureWords;
  /**
   * Write the dead letter of a lane's notification that has no job of its own to fail (`data`, as
   * kept), where every redrive path finds it, after `runs` runs since its last redrive (`attempt` all
   * told). True once written; false when it could not be (the record then must not fail).
   */
  writeDeadLetter(data: Partial<NotificationJobData>, attempt: number, runs: number, reason: string): Promise<boolean>;
}

/** How a lane's run failed: back in line for a retry (`retryInMs`), or a dead letter (`final`, `unwritten` if not written yet). */
export interface LaneFailure {
  err: unknown;
  /** The handler runs the notification had, all told. */
  attempt: number;
  retryInMs?: number;
  final?: true;
  unwritten?: true;
}

/** A lane notification's data as the run needs it: the notification, and its job data as kept (a dead letter is written with it). */
export type LaneData = Pick<NotificationJob, "notification"> & { raw?: Partial<NotificationJobData> | undefined };

/** What the store and settings a lane's run fails in are. */
export interface LaneRunSettings {
  store: IdempotencyStore;
  redact?: RedactOptions | undefined;
}

/**
 * One claimed notification's run in an ordered lane, on a store that can put a failed run back in
 * line (`lanes.retry`, or `requeueInLane` in the claim's transaction); `failed` says how it failed.
 */
export class LaneRun {
  failed: LaneFailure | undefined;

  constructor(
    private readonly queue: LaneQueue,
    /** The drain job's own notification: its job fails by itself, no dead letter is written for it. */
    readonly isOwn: boolean,
    private readonly claim: ClaimedOrStale,
    private readonly data: LaneData,
    private readonly settings: LaneRunSettings,
  ) {}

  /**
   * Records a failed run outside a transaction (see `ClaimedHooks.recordFailure`): with attempts left,
   * back in line at its position for its retry after the queue's back-off (the lane waits for it);
   * after its last, failed, its dead letter written first so every redrive finds it. Attempts count
   * from its last redrive (`lanePrior`), as a redriven job's do.
   */
  readonly recordFailure = async (failed: SteeredFailure | "handler_timeout", err: unknown): Promise<boolean> => {
    const { claim, settings } = this;
    const { runs, retryInMs } = await this.verdict(err);
    if (retryInMs !== undefined) {
      this.failed = { err, attempt: claim.attempt, retryInMs };
      return Promise.resolve(drainedLanes(settings.store)!.retry(claim, failed, retryInMs));
    }
    // Not written, the record is not failed either: it goes back in line and is tried again shortly.
    if (!(await this.deadLetterStands(runs, err))) return false;
    // A dead letter: on a lane that holds, it stays at the lane's head, holding the rest (see `lanes.fail`).
    const lanes = drainedLanes(settings.store);
    return (await (lanes ? lanes.fail(claim, failed) : settings.store.fail(claim, failed))) !== false;
  };

  /**
   * For a claim made in a transaction (see `settlingInTransaction`): a failed run with attempts left goes
   * back in line in it, due as `recordFailure` would retry it; its last is failed in it, its dead letter
   * written first (not written, it goes back in line and is tried again shortly, as without one).
   */
  inTransaction(): TransactionFailurePolicy {
    return {
      requeue: async (err) => {
        const { runs, retryInMs } = await this.verdict(err);
        const inMs = retryInMs ?? ((await this.deadLetterStands(runs, err)) ? undefined : STORE_RETRY_MS);
        return inMs === undefined ? undefined : async () => inMs;
      },
      // Its last run (or refused for good): failed in the same transaction, so the record is never
      // back in line with its lane free in between, for another worker to run it again.
      failWith: () => async () => {},
      settled: (err, retryInMs) => {
        if (retryInMs !== undefined) this.failed = { ...this.failed, err, attempt: this.claim.attempt, retryInMs };
      },
    };
  }

  private verdict(err: unknown) {
    return laneVerdict(err, this.claim.attempt, this.data.raw?.lanePrior, this.queue.policy);
  }

  /**
   * The notification failed its last run: whether its dead letter stands. The drain job's own fails its
   * job by itself; one with no job of its own is written to the dead letters before its record is
   * failed. Not written: false, and the record must not fail.
   */
  private async deadLetterStands(runs: number, err: unknown): Promise<boolean> {
    const attempt = this.claim.attempt;
    this.failed = { err, attempt, final: true };
    if (this.isOwn) return true;
    const reason = redactErrorInPlace(err, this.settings.redact ?? {}, this.data.notification).message;
    if (await this.queue.writeDeadLetter({ ...this.data.raw, lanePrior: attempt }, attempt, runs, reason)) return true;
    this.failed.unwritten = true;
    return false;
  }
}

/**
 * The lane run of a claimed notification, when the lane's failures are the worker's to settle: an
 * ordered claim, on a store that can put a failed run back in line, with a queue that can write its
 * dead letter, and (for another notification than the job's own) its job data as kept. Else undefined:
 * a failed run is failed as any.
 */
export function laneRunOf(
  queue: LaneQueue | undefined,
  claim: ClaimedOrStale,
  data: LaneData,
  isOwn: boolean,
  settings: LaneRunSettings,
  transaction: TransactionalClaim | undefined,
): LaneRun | undefined {
  const requeues = transaction ? requeuesInLane(transaction) : drainedLanes(settings.store) !== undefined;
  if (claim.order?.key === undefined || !requeues || !queue || (!isOwn && !data.raw)) return undefined;
  return new LaneRun(queue, isOwn, claim, data, settings);
}

/**
 * The one line of a failed run of a lane that the queue does not log itself: every one but the drain
 * job's own last (its job fails, and the queue logs that) whose dead letter stands.
 */
export function logLaneFailure(
  logger: Logger | undefined,
  settings: LaneRunSettings,
  run: { jobId: string; claim: ClaimedOrStale; data: LaneData; ownJobFails: boolean },
  failed: LaneFailure,
  words: FailureWords,
): void {
  if (!logger || (failed.final && run.ownJobFails && !failed.unwritten)) return;
  const err = redactErrorInPlace(failed.err, settings.redact ?? {}, run.data.notification);
  const fields = {
    notification_id: run.claim.id,
    event_type: run.data.notification.event_type,
    job_id: run.jobId,
    attempt: failed.attempt,
    outcome: err instanceof HandlerTimeoutError ? "handler_timeout" : "handler_failed",
    final: failed.final === true,
    ...(failed.retryInMs !== undefined ? { retry_in_ms: Math.round(failed.retryInMs) } : {}),
    err,
  };
  const fate: FailedRunFate = failed.unwritten
    ? { fate: "unwritten" }
    : { fate: "failed", final: failed.final === true };
  logFailedRun(logger, fields, fate, words);
}
