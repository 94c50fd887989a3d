import { Backoffs, DelayedError, Job, type MinimalQueue, UnrecoverableError } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import type { HandlerObserver } from "../dispatch/handler-observer.js";
import { retryInBackground } from "../dispatch/retry-in-background.js";
import {
  type ClaimedOrStale,
  type ClaimHandle,
  drainedLanes,
  type IdempotencyStore,
  type StoredAnswer,
} from "../idempotency/store.js";
import { claimsInTransaction, type TransactionalClaim } from "../idempotency/transaction.js";
import { withTimeout } from "../shared/time-limit.js";
import type { FailureWords } from "../worker/failed-run.js";
import { type FoundJobData, type HandedOver, UNREACHABLE } from "../worker/handed-over.js";
import { type NotificationJob, type NotificationJobData, readQueuedJob } from "../worker/job-data.js";
import { type LaneQueue, type LaneRun, laneRunOf, logLaneFailure } from "../worker/lane-failure.js";
import type { LaneRetryPolicy } from "../worker/lane-retry.js";
import { settlingInTransaction } from "../worker/lane-transaction.js";
import { RECHECK_MIN_MS, recheckDelay, STORE_RETRY_MS } from "../worker/recheck-delay.js";
import { LeaseLost, leaseLostHere, runClaim, runQueuedJob } from "../worker/run-job.js";
import type { RunSettings } from "../worker/run-settings.js";
import { type Taken, takeNext } from "../worker/take-next.js";
import type { Claimed, HeldClaim, JobTransport, LaneLookups, RunStep } from "../worker/transport.js";
import { keepUnrunnable, writeDeadLetterSoon } from "./dead-letter.js";
import { jobIdFor } from "./job-id.js";
import { onceLeftActive } from "./left-active.js";
import type { LedgerDrops, LedgerEntry, QueueLedger } from "./queue-ledger.js";
import { failRecordOfUnreadable } from "./unreadable-record.js";

/** A job's data once opened and validated, with the job when it is another notification's. */
interface ReadJobData extends NotificationJob {
  job?: Job<NotificationJobData>;
  /** The data as the queue keeps it (sealed, or card numbers masked): what a dead letter is written with. */
  raw?: Partial<NotificationJobData>;
}

/** An ordered lane's notification failed its last attempt: its job goes straight to the failed set. */
export class LaneAttemptsSpent extends UnrecoverableError {
  constructor(
    cause: unknown,
    /** The handler runs the notification had, all told. */
    readonly attempt: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    if (cause instanceof Error && cause.stack) this.stack = cause.stack;
    this.cause = cause;
  }
}

/** Job data that cannot be opened or is not a notification: it goes straight to the failed set. */
export class InvalidJobDataError extends UnrecoverableError {}

/** How a job ended without an error; also the job's return value. */
export type JobOutcome = "processed" | "unhandled" | "stale" | "duplicate" | "conflict";

/** What a BullMQ job's run needs beyond every worker's settings. */
export interface JobRunner extends RunSettings {
  /** The queue's ledger of job copies: dropped once a notification is done, read when a waiting notification's job is gone. */
  ledger?: QueueLedger | undefined;
  /** Drops of done notifications' copies, gathered across jobs (`batchedDrops`); else a drain's own batches. */
  drops?: LedgerDrops | undefined;
  /** A connection to the queue's Redis: a lane's dead letter is written into the failed set with it. */
  queueClient?: Redis | Cluster | undefined;
}

/** Thrown after a job was put back to wait without using one of its attempts. */
class Postponed extends DelayedError {}

/** Postponed until a failed notification of its lane is due for its retry (see `lanes.retry`). */
export class WaitingForRetry extends Postponed {}

/** The longest a worker-side queue command (postpone, job lookup, removal) may take. */
const WORKER_CALL_TIMEOUT_MS = 5_000;

/**
 * Run one notification job (`runQueuedJob`): validate its data, claim the record with the worker's own
 * token, run the handler, and complete or fail the record. A handler error fails the record and is
 * rethrown, so BullMQ's attempts and backoff apply. Waiting for someone else and an unreachable store
 * postpone the job (`moveToDelayed`) without using an attempt. A receiver's claim still being marked
 * queued is taken over at once (the job names it), so a fast worker never waits for that second step.
 *
 * In order, the claim may hand the worker an older notification of the subscription than its own
 * job's (the first in the subscription's lane); the worker runs it from that notification's
 * job data, and then each next one the store hands it while the subscription stays with it, its own
 * among them. A job whose own notification was left waiting is postponed as a safety net only: the
 * worker holding the subscription runs it, and removes the job once it is done.
 */
export async function processJob(
  job: Job<NotificationJobData>,
  token: string | undefined,
  runner: JobRunner,
  observeHandler?: HandlerObserver,
): Promise<JobOutcome> {
  const read = readQueuedJob(job.data, runner.keys, job.timestamp);
  if ("unreadable" in read) {
    // No retry will read it: straight to the failed set, its record failed with it (not left queued).
    await failRecordOfUnreadable(job, runner);
    throw new InvalidJobDataError(read.unreadable.message);
  }
  return runQueuedJob(new BullmqJob(job, read.job, token, runner, observeHandler), runner);
}

/** A BullMQ job as the worker core runs it: the drain job of its lane too, in order. */
class BullmqJob implements JobTransport<JobOutcome> {
  readonly jobId: string;
  readonly attempt: number | undefined;
  /** Set when the job's own notification was settled before: the job's outcome, whatever it drains. */
  private settledAs: JobOutcome | undefined;
  private outcome: JobOutcome | undefined;
  private ownFailure: unknown;
  /** A run of the lane failed with attempts left and went back in line: the job comes back for it then. */
  private retry: { inMs: number; data: ReadJobData } | undefined;
  /** A waiting notification's data could not be read: the subscription's lane is left to run later, by this job. */
  private unreachable = false;
  /** The lane's next notification, asked for as soon as the current one's completion was sent. */
  private early: Promise<Taken | undefined> | undefined;
  /**
   * Tidying after a waiting notification (its job removed, its ledger copy dropped) overlaps the next waiting notification's run:
   * both are safe to lose (a leftover job finds its record completed, a leftover copy is swept), and
   * waiting for them would put two more round trips between each notification of a hot subscription.
   * Copies are dropped a batch at a time: one transaction per ledger part for up to `DROP_BATCH`.
   */
  private readonly tidying: Promise<void>[] = [];
  private readonly done: ReturnType<typeof copiesDone>;
  /** The queue's part of the job's lane failure policy: the job's retry policy and the failed set. */
  private readonly lane: LaneQueue | undefined;
  /** A lane's notification, handed over without its data, is found from its job or the ledger's copy. */
  readonly lookUps: LaneLookups<FoundJob>;
  readonly jobIdFor = jobIdFor;

  constructor(
    private readonly job: Job<NotificationJobData>,
    readonly own: ReadJobData,
    private readonly token: string | undefined,
    private readonly runner: JobRunner,
    private readonly observeHandler: HandlerObserver | undefined,
  ) {
    this.jobId = String(job.id);
    // Unordered, the record keeps BullMQ's count of the run (the runs it made, plus this one): the
    // record, the job and ctx.attempt say the same. A lane counts its runs itself.
    this.attempt = own.order ? undefined : job.attemptsMade + 1;
    this.done = copiesDone(runner, this.tidying);
    this.lane = own.order ? bullmqLane(job, runner) : undefined;
    this.lookUps = {
      find: (id) => findJobData(job, id, runner),
      keepUnrunnable: (claim) => keepUnrunnable(runner.queueClient, job, claim, runner.shutdown),
      leftForLater: () => {
        this.unreachable = true;
      },
    };
  }

  async redrivenAhead(): Promise<number | undefined> {
    const after = this.own.raw?.redriveAfter;
    if (typeof after !== "string") return undefined;
    return (await stillOnItsWayBack(this.job, after, this.own.order!.key, this.runner.store))
      ? recheckDelayOf(this.job)
      : undefined;
  }

  /**
   * Come back only when the holder's lease would have run out (it died), or soon when the
   * subscription's first notification is still being queued.
   */
  recheckMs(held?: HeldClaim): number {
    return held?.status === "processing" && held.key && held.retryAfterMs > RECHECK_MIN_MS
      ? held.retryAfterMs + RECHECK_MIN_MS
      : recheckDelayOf(this.job);
  }

  postpone(inMs: number | undefined): Promise<never> {
    return postpone(this.job, this.token, inMs ?? recheckDelayOf(this.job));
  }

  async settled(status: "completed" | "conflict"): Promise<JobOutcome | undefined> {
    const { runner, own } = this;
    if (!sweptWithLane(runner, own.order)) await forgetCopy(runner, own.id, own.ledger);
    this.settledAs = this.outcome = status === "completed" ? "duplicate" : "conflict";
    // An ordered job is also its subscription's drain job (the lane's notifications have none of
    // their own): it runs what still waits before it ends.
    return !own.order || runner.shutdown.aborted ? this.settledAs : undefined;
  }

  async run(
    { claim: current, transaction, leaseFrom }: Claimed,
    handed?: HandedOver<FoundJob>,
  ): Promise<RunStep<JobOutcome>> {
    const { job, runner } = this;
    this.early = undefined;
    const isOwn = current.id === this.own.id;
    const data = handed ? readJobDataOf(handed) : this.own;
    const key: string | undefined = current.order?.key;
    // The next waiting notification is asked for as soon as this one's completion is sent (see `completionSent`).
    // Not with a store that claims in a transaction: its take-next runs on another connection, which
    // would meet the subscription still held until the commit lands.
    const takeEarly =
      key === undefined || claimsInTransaction(runner.store)
        ? undefined
        : () =>
            (this.early ??= runner.shutdown.aborted
              ? undefined
              : takeNext(runner.store, key, runner.nextOwner(this.jobId), runner.leaseMs, runner.timeoutMs));
    const lane = laneRunOf(this.lane, current, data, isOwn, runner, transaction);
    // With a store that can, the next waiter comes back with the completion: one round trip, not two.
    const completing =
      takeEarly && drainedLanes(runner.store)
        ? completingWithNext(runner, job, (taken) => {
            this.early = taken;
          })
        : undefined;
    const result = await runOne(
      current,
      data,
      runner,
      isOwn ? this.observeHandler : undefined,
      transaction,
      takeEarly,
      leaseFrom,
      lane,
      completing,
    );
    if (lane?.failed) {
      logLaneFailure(
        runner.logger,
        runner,
        { jobId: this.jobId, claim: current, data, ownJobFails: current.id === readJobId(job) },
        lane.failed,
        LANE_FAILURE_WORDS,
      );
      if (lane.failed.retryInMs !== undefined) {
        this.retry = { inMs: lane.failed.retryInMs, data };
        return "stop";
      }
      if (lane.failed.unwritten) {
        this.unreachable = true;
        return "stop";
      }
    }
    if (isOwn) {
      if ("failure" in result)
        this.ownFailure = lane?.failed ? new LaneAttemptsSpent(result.failure, lane.failed.attempt) : result.failure;
      else if (result.outcome === "lease_lost") return "lease_lost";
      else this.outcome = result.outcome;
    } else if (!("failure" in result) && result.outcome !== "lease_lost") {
      if (data.job) this.tidying.push(removeDone(data.job, runner.shutdown));
      // Run from the data kept in the lane, unlooked-up: a run after the first (its runner died, or
      // its own job was stuck) may leave that job behind, active under a dead lock until the stalled
      // check. Only then is it looked for, and removed.
      else if (current.attempt > 1) this.tidying.push(removeJobOf(job, current.id, runner.shutdown));
      if (!sweptWithLane(runner, current.order)) this.done.add(current.id, data.ledger);
    }
    return "next";
  }

  drainsOn(): boolean {
    // One taken early by a worker shutting down is left: its lease lapses and it goes back in line.
    return !this.runner.shutdown.aborted;
  }

  takenEarly(): Promise<Taken | undefined> | undefined {
    // Handed over once: a lane notification the core settles without a run (its data gone) must not
    // find the take that brought it here still waiting, and be handed to itself again.
    const early = this.early;
    this.early = undefined;
    return early;
  }

  async finish(): Promise<JobOutcome> {
    const { job, token, runner, own, ownFailure, outcome, retry } = this;
    if (
      ownFailure === undefined &&
      outcome !== undefined &&
      this.settledAs === undefined &&
      !sweptWithLane(runner, own.order)
    )
      this.done.add(own.id, own.ledger);
    this.done.flush();
    await Promise.all(this.tidying);
    if (retry) {
      if (ownFailure === undefined) return postpone(job, token, retry.inMs, WaitingForRetry);
      // This job goes to the failed set for its own notification: a job of the one retried carries the lane on.
      await handLaneOn(job, retry.data, retry.inMs, runner.shutdown);
    }
    if (ownFailure !== undefined) {
      if (ownFailure instanceof LaneAttemptsSpent) await keepLanePrior(job, ownFailure.attempt, runner.queueClient);
      throw ownFailure;
    }
    // Its notification still waits its turn in the list: the job stays as the safety net for it.
    if (outcome === undefined) return postpone(job, token, runner.leaseMs);
    // Back soon: its own notification is settled by then, and the job runs the lane on from its head.
    if (this.unreachable) return postpone(job, token, STORE_RETRY_MS);
    return outcome;
  }
}

/**
 * Whether the dead letter `id`, redriven before this job's in the same lane, has not yet gone back into
 * the lane: its record still failed while its job is on its way (waiting, or active before its claim).
 * Once it is in line, or failed again, or its job is gone, this one may go (an unanswered question too).
 */
async function stillOnItsWayBack(
  job: Job<NotificationJobData>,
  id: string,
  key: string,
  store: IdempotencyStore,
): Promise<boolean> {
  try {
    const [record, other] = await Promise.all([Promise.resolve(store.get({ id, order: { key } })), lookUpJob(job, id)]);
    if (record?.state !== "failed" || !other) return false;
    const state = await withTimeout(other.getState(), WORKER_CALL_TIMEOUT_MS, () => new Error("job state timed out"));
    return state !== "failed" && state !== "completed" && state !== "unknown";
  } catch {
    return false;
  }
}

/**
 * The queue's part of its lanes' failure policy (see `LaneRun`): the drain job's retry policy, and a
 * waiter's dead letter (it has no job of its own to fail) written into the failed set under its own
 * job id, so every redrive finds it.
 */
function bullmqLane(job: Job<NotificationJobData>, runner: JobRunner): LaneQueue | undefined {
  const client = runner.queueClient;
  if (!client) return undefined;
  return {
    policy: lanePolicy(job),
    words: LANE_FAILURE_WORDS,
    writeDeadLetter: (data, _attempt, runs, reason) =>
      writeDeadLetterSoon(client, job, data as NotificationJobData, runs, reason, runner.shutdown),
  };
}

/** The lane's retry policy: the drain job's attempts, and its backoff as BullMQ would wait. */
function lanePolicy(job: Job<NotificationJobData>): LaneRetryPolicy {
  return {
    attempts: job.opts.attempts ?? 1,
    async backoffMs(runs, err) {
      const backoff = Backoffs.normalize(job.opts.backoff ?? 0);
      if (!backoff) return 0;
      const delay = await Backoffs.calculate(backoff, runs, err as Error, job);
      return typeof delay === "number" && delay > 0 ? delay : 0;
    },
  };
}

/** Where a BullMQ job's failed run goes: its failed set is the dead letters. */
export const BULLMQ_FAILURE_WORDS: FailureWords = {
  deadLettered: "left in the failed set",
  retries: "will retry",
};

/** A lane's failed run is retried in its place, by the runner of the lane, not by BullMQ. */
const LANE_FAILURE_WORDS: FailureWords = { ...BULLMQ_FAILURE_WORDS, retries: "will retry in its lane" };

const readJobId = (job: Job<NotificationJobData>): string | undefined => job.data?.id ?? job.data?.notification?.id;

/**
 * The drain job ends in the failed set (its own notification failed its last attempt) while a waiting notification
 * it ran waits for its retry: a job of that waiting notification's carries the lane on, due when the retry is.
 */
async function handLaneOn(
  job: Job<NotificationJobData>,
  data: ReadJobData,
  inMs: number,
  stop: AbortSignal,
): Promise<void> {
  if (!data.raw) return;
  const queue = (job as unknown as { queue: MinimalQueue }).queue;
  const { jobId: _own, delay: _delay, ...opts } = job.opts;
  const dueInMs = Math.max(1, inMs);
  const call = <T>(step: Promise<T>) =>
    withTimeout(step, WORKER_CALL_TIMEOUT_MS, () => new Error("job hand-on timed out"));
  const handed = await call(
    Job.create(queue, data.notification.event_type, data.raw as NotificationJobData, {
      ...opts,
      jobId: jobIdFor(data.id),
      delay: dueInMs,
    }),
  ).catch(() => undefined);
  if (!handed) return;
  // BullMQ adds nothing under an id it holds: the waiting notification's own job, put off for a whole lease as the
  // lane's safety net (its notification waited behind this one), would carry the lane on only then.
  // It is brought forward to the retry instead, once its worker has moved it to the delayed set.
  const dueThen = () =>
    call(handed.changeDelay(dueInMs)).then(
      () => true,
      async () => (await call(handed.getState())) !== "active",
    );
  await onceLeftActive(dueThen, stop).catch(() => {});
}

/**
 * A dead-lettered notification of a lane keeps its runs so far: redriven, its attempts count afresh.
 * Its job counts the runs since its last redrive, as a waiting notification's dead letter does (BullMQ adds the last).
 */
async function keepLanePrior(job: Job<NotificationJobData>, attempt: number, client?: Redis | Cluster): Promise<void> {
  const prior = typeof job.data?.lanePrior === "number" ? job.data.lanePrior : 0;
  job.attemptsMade = Math.max(0, attempt - prior - 1);
  const queue = (job as unknown as { queue: MinimalQueue }).queue;
  await withTimeout(
    Promise.all([
      job.updateData({ ...job.data, lanePrior: attempt }),
      client?.hset(queue.toKey(String(job.id)), "atm", job.attemptsMade),
    ]),
    WORKER_CALL_TIMEOUT_MS,
    () => new Error("job update timed out"),
  ).catch(() => {});
}

/**
 * The runner's store, whose first `complete` (of a lane's claim) is sent as `lanes.completeAndTakeNext`: the
 * lane's next waiting notification is handed to this runner in the completion's own step, and `handOver` gets it as
 * `takeNext` would answer. A refused or failed completion hands over nothing (undefined): the drain then
 * asks `takeNext` itself, as before. A completion sent again (`retryCompletion`) is a plain one.
 */
function completingWithNext(
  runner: JobRunner,
  job: Job<NotificationJobData>,
  handOver: (taken: Promise<Taken | undefined>) => void,
): IdempotencyStore {
  const store = runner.store;
  let sent = false;
  const complete = (claim: ClaimHandle, answer: StoredAnswer) => {
    if (sent || runner.shutdown.aborted) return store.complete(claim, answer);
    sent = true;
    const sentAt = performance.now();
    const next = { owner: runner.nextOwner(String(job.id)), leaseMs: runner.leaseMs };
    const both = Promise.resolve(drainedLanes(store)!.completeAndTakeNext(claim, answer, next));
    handOver(
      both.then(
        ({ completed, next: taken }) => (completed ? { ...(taken ? { current: taken } : {}), sentAt } : undefined),
        () => undefined,
      ),
    );
    return both.then(({ completed }) => completed);
  };
  return Object.assign(Object.create(store) as IdempotencyStore, { complete });
}

/** What one run of a claimed notification came to, as `processJob` needs it. */
type RunResult = { outcome: "processed" | "unhandled" | "stale" | "lease_lost" } | { failure: unknown };

// The hooks of every run, made once rather than per job.
const rethrow = (err: unknown): never => {
  throw err;
};

async function runOne(
  claim: ClaimedOrStale,
  data: ReadJobData,
  runner: JobRunner,
  observeHandler: HandlerObserver | undefined,
  transaction: TransactionalClaim | undefined,
  completionSent: (() => void) | undefined,
  leaseFrom: number,
  lane?: LaneRun,
  /** The store to complete in, when not the runner's own (see `completingWithNext`). */
  completing?: IdempotencyStore,
): Promise<RunResult> {
  // Unordered, the claim kept the queue's count; in a lane, each take counts one (an append none).
  const attempt = claim.attempt;
  try {
    if (lane && transaction) {
      // Put back in line in the claim's own transaction (postgresStore), the record keeping its count.
      ({ transaction, observe: observeHandler } = await settlingInTransaction(
        transaction,
        lane.inTransaction(),
        observeHandler,
      ));
    }
    const { outcome } = await runClaim(
      runner,
      { claim, data, attempt, transaction, leaseFrom, store: completing },
      {
        leaseLost: leaseLostHere,
        failed: rethrow,
        // The handler's effect happened, so the job must not fail now: a retry would run the handler
        // again once the lease ran out. Keep trying to record it while the job holds its place.
        retryCompletion: retryInBackground,
        ...(observeHandler ? { observeHandler } : {}),
        ...(completionSent ? { completionSent } : {}),
        ...(lane ? { recordFailure: lane.recordFailure } : {}),
      },
    );
    return { outcome: outcome as "processed" | "unhandled" | "stale" };
  } catch (err) {
    if (!(err instanceof LeaseLost)) return { failure: err };
    // Still this worker's if only its confirmation came too late: let it go at once (a lease of 0), so
    // whoever comes next need not wait the lease out. Taken over, the record refuses it.
    if (!transaction) await Promise.resolve(runner.store.extend(claim, 0)).catch(() => {});
    return { outcome: "lease_lost" };
  }
}

/** A lane notification's data as BullMQ keeps it: on its job, else in the ledger's copy (in its part). */
interface FoundJob extends FoundJobData {
  job?: Job<NotificationJobData>;
  ledger?: number;
}

/** A lane notification's data, read, with where it was found (see `ReadJobData`). */
function readJobDataOf({ job, found }: HandedOver<FoundJob>): ReadJobData {
  if (found?.job) return { ...job, job: found.job };
  return found?.ledger !== undefined ? { ...job, ledger: found.ledger } : job;
}

/**
 * The job data of another notification, to run it here (see `handedOverData`): from its job, else
 * from the ledger's copy. Undefined when both say it is gone; `UNREACHABLE` when neither could be asked.
 */
async function findJobData(
  job: Job<NotificationJobData>,
  id: string,
  runner: JobRunner,
): Promise<FoundJob | undefined | typeof UNREACHABLE> {
  // Both asked at once: a lane's notifications have no job of their own, only the ledger's copy,
  // and asking one after the other would put a round trip more between each of a subscription's runs.
  const [looked, found] = await Promise.allSettled([
    lookUpJob(job, id),
    runner.ledger
      ? withTimeout(runner.ledger.find(id), WORKER_CALL_TIMEOUT_MS, () => new Error("ledger lookup timed out"))
      : undefined,
  ]);
  // A failed lookup leaves the ledger's copy to answer (it may sit on another master); it is the same data.
  const lookupFailed = looked.status === "rejected";
  const other = looked.status === "fulfilled" ? looked.value : undefined;
  if (other) return { data: other.data, since: other.timestamp, job: other };
  // The job is gone (a failover lost it, or it was removed; a lane's never had one), or could not
  // be looked up: run the notification from the ledger's copy.
  if (found.status === "rejected") return UNREACHABLE;
  const copy: LedgerEntry | undefined = found.value;
  if (!copy?.data) return lookupFailed ? UNREACHABLE : undefined;
  return { data: copy.data, since: copy.since, ledger: copy.part };
}

/**
 * Whether a done notification's ledger copy is left to the sweep: in a lane of a store that says whether
 * its lane still waits (`lanes.waiting`), the queue keeps a copy only of the notification that woke the
 * lane, the lane's own safety net, which the sweep drops once the lane is empty.
 */
const sweptWithLane = (runner: JobRunner, order: unknown): boolean =>
  order !== undefined && drainedLanes(runner.store) !== undefined;

/** How many done notifications' ledger copies a drain drops in one go. */
const DROP_BATCH = 64;

/**
 * The ledger copies of the notifications a drain has done, dropped a batch at a time: handed to the
 * worker's `drops` (gathered across its jobs), else batched here (`flush`, or every `DROP_BATCH`),
 * the drop joining `tidying`. Either way a drain spends a round trip on its copies per batch, not per
 * notification. A copy whose part is unknown (an older job) is dropped from every part at once.
 */
function copiesDone(
  runner: JobRunner,
  tidying: Promise<void>[],
): { add(id: string, part?: number): void; flush(): void } {
  let batch: Array<{ id: string; part: number }> = [];
  const flush = () => {
    if (batch.length === 0 || !runner.ledger) return;
    const ledger = runner.ledger;
    const copies = batch;
    batch = [];
    tidying.push(
      withTimeout(ledger.forgetAll(copies), WORKER_CALL_TIMEOUT_MS, () => new Error("ledger write timed out")).catch(
        () => {},
      ),
    );
  };
  return {
    add(id, part) {
      if (!runner.ledger) return;
      if (part === undefined) {
        tidying.push(forgetCopy(runner, id, part));
        return;
      }
      if (runner.drops) runner.drops.drop(id, part);
      else {
        batch.push({ id, part });
        if (batch.length >= DROP_BATCH) flush();
      }
    },
    flush,
  };
}

/** The notification is done: its ledger copy is no longer needed (a sweep drops one this misses). */
async function forgetCopy(runner: JobRunner, id: string, part: number | undefined): Promise<void> {
  if (!runner.ledger) return;
  await withTimeout(
    runner.ledger.forget(id, part),
    WORKER_CALL_TIMEOUT_MS,
    () => new Error("ledger write timed out"),
  ).catch(() => {});
}

/** The job of the notification `id`, if it has one, ran here: it is removed (see `removeDone`). */
async function removeJobOf(job: Job<NotificationJobData>, id: string, stop: AbortSignal): Promise<void> {
  await removeDone(await lookUpJob(job, id).catch(() => undefined), stop);
}

/** The job of the notification `id`, through the job's own queue handle (protected in BullMQ's types). */
function lookUpJob(job: Job<NotificationJobData>, id: string): Promise<Job<NotificationJobData> | undefined> {
  return withTimeout(
    Job.fromId<NotificationJobData>((job as unknown as { queue: MinimalQueue }).queue, jobIdFor(id)),
    WORKER_CALL_TIMEOUT_MS,
    () => new Error("job lookup timed out"),
  );
}

/**
 * A job whose notification ran here has nothing left to do: it is removed. BullMQ refuses while the
 * job's own worker holds it: that worker met the lane held and is about to put the job off for a whole
 * lease as the lane's safety net, so it is removed once it has left the active list. Still held then
 * (or Redis away), the job ends by itself when it comes back and finds its record completed.
 */
async function removeDone(job: Job | undefined, stop: AbortSignal): Promise<void> {
  if (!job) return;
  const removed = () =>
    withTimeout(
      job.remove().then(
        () => true,
        () => false,
      ),
      WORKER_CALL_TIMEOUT_MS,
      () => new Error("job removal timed out"),
    );
  await onceLeftActive(removed, stop).catch(() => {});
}

/** 50 ms, then doubling with each start of this job that used no attempt, up to 5 s. */
function recheckDelayOf(job: Job): number {
  return recheckDelay((job.attemptsStarted ?? 1) - job.attemptsMade - 1);
}

/**
 * Put the job back to wait. The move has a deadline: the worker's connection queues commands while
 * Redis is away, and a move that never settles would keep the job's slot taken for good. Past the
 * deadline the job is left active; its lock lapses and BullMQ's stalled-job check puts it back.
 */
async function postpone(
  job: Job,
  token: string | undefined,
  delayMs: number,
  as: typeof Postponed = Postponed,
): Promise<never> {
  // A move that fails says nothing about the notification either. "Missing lock" (or any lock error):
  // the job is no longer this worker's (its lock lapsed and the stalled check handed it on); another
  // failure leaves it active until that happens. Either way, failing the job here would spend an
  // attempt, or leave a failed-set entry for a notification that ran.
  await withTimeout(
    job.moveToDelayed(Date.now() + Math.max(1, delayMs), token),
    WORKER_CALL_TIMEOUT_MS,
    () => new as(),
  ).catch(() => {});
  throw new as();
}
