import type { PoolClient } from "pg";
import type PgBoss from "pg-boss";
import type { HandlerObserver } from "../dispatch/handler-observer.js";
import { type RetryDecision, retryDecision, type SteeredFailure } from "../dispatch/retry-decision.js";
import { HandlerTimeoutError } from "../dispatch/run-claimed.js";
import type { TransactionalClaim, TransactionalStore } from "../idempotency/transaction.js";
import { redactErrorInPlace } from "../logging/redact-error.js";
import { guardTransaction } from "../postgres/guarded-transaction.js";
import { coded } from "../shared/errors.js";
import { observeJob } from "../telemetry/observe-job.js";
import { type FailureWords, failedRunFate, logFailedRun } from "../worker/failed-run.js";
import { type NotificationJob, readQueuedJob } from "../worker/job-data.js";
import {
  failsWithin,
  requeuesInLane,
  settlingInTransaction,
  type TransactionFailurePolicy,
} from "../worker/lane-transaction.js";
import { failUnrunnable } from "../worker/let-go.js";
import { runAttempt } from "../worker/run-attempt.js";
import { LeaseLost, leaseLostHere, runClaim, runQueuedJob } from "../worker/run-job.js";
import type { RunSettings } from "../worker/run-settings.js";
import type { Claimed, JobTransport, RunStep } from "../worker/transport.js";
import { failUnreadableRecord } from "../worker/unreadable-job.js";
import { executorOn, type JobTable, type Queryable } from "./job-table.js";

/** A job found ready in the queue (`JobTable.ready`). */
export interface ReadyJob {
  id: string;
  data: unknown;
  created_ms: number;
  /** The run this look would be, as pg-boss counts it (its retries so far, plus one). */
  attempt: number;
}

/** What a pg-boss job's run needs beyond every worker's settings. */
export interface PgBossRunner extends RunSettings {
  boss: PgBoss;
  name: string;
  table: JobTable;
  jobIdFor: (id: string) => string;
  store: TransactionalStore;
  /** True once the worker is closing: a subscription's next waiting notification is left for another worker. */
  stopping: () => boolean;
}

/** What became of a job looked at: its notification ran (or never will), or it is to be looked at again. */
export type JobVisit = { done: true } | { done: false; retryInMs?: number };

/** How one notification's run in its transaction ended, as its log line says. */
type RunOutcome =
  | "processed"
  | "unhandled"
  | "stale"
  | SteeredFailure
  | "handler_timeout"
  | "invalid"
  | "job_missing"
  | "store_unavailable"
  | "lease_lost";

/** Where a pg-boss job's failed run goes: pg-boss's own retries, then its dead-letter queue. */
const PG_BOSS_FAILURE_WORDS: FailureWords = {
  deadLettered: "dead-lettered",
  retries: "pg-boss retries it, then dead-letters it",
};

/** A redriven job of a subscription behind an older redriven one: looked at again after this long. */
const REDRIVEN_WAIT_MS = 100;

/** A job as `take` answers it: its data, and its retries so far and allowed. */
interface TakenJob {
  data: unknown;
  created_ms: number;
  retry_count: number;
  retry_limit: number;
}

/**
 * Whether an older redriven job of the same subscription still waits. Out of attempts, an ordered
 * notification leaves its subscription's lane; redriven, its job is back but not its place
 * in the list, and dead letters redriven together would otherwise race for the subscription, the
 * older ones turning stale behind a newer one. Their jobs say their order: the oldest runs first.
 */
async function olderRedrivenWaits(runner: PgBossRunner, job: ReadyJob, own: NotificationJob): Promise<boolean> {
  if ((job.data as { redriven?: unknown } | null)?.redriven === undefined) return false;
  const place = `${own.order!.position ?? ""}\n${own.id}`;
  const { rows } = await runner.boss
    .getDb()
    .executeSql(runner.table.olderRedriven, [runner.name, job.id, own.order!.key, place]);
  return rows.length > 0;
}

/**
 * Look at one ready job (`runQueuedJob`): claim its notification in a transaction (taking over the
 * receiver's queued record), take the job in that same transaction, run the handler with it as
 * `ctx.transaction`, and commit the record's completion with the job's. Nothing of a run is committed
 * until the end: a worker killed mid-handler leaves the record queued and the job ready, and the next
 * look at it runs it again, at once.
 *
 * In order, the claim may hand over an older notification of the subscription (the first of its
 * lane); it runs from its own job, taken in its transaction, and so on down the list while
 * the subscription stays here. A job whose notification was left waiting is looked at again later.
 */
export async function runJob(job: ReadyJob, runner: PgBossRunner): Promise<JobVisit> {
  const read = readQueuedJob(job.data, runner.keys, job.created_ms);
  if ("unreadable" in read) {
    await deadLetterUnreadable(runner, { job_id: job.id }, read.unreadable);
    // Its record goes with it to the dead letters, not left queued (its lane's next run from their own jobs).
    await failUnreadableRecord(runner, { jobId: job.id, data: job.data, jobIdFor: runner.jobIdFor });
    return { done: true };
  }
  return runQueuedJob(new PgBossJob(job, read.job, runner), runner);
}

/**
 * Job data that is not a notification (see `QueuedJobRead`): to the dead-letter queue at once, with
 * the reason, since no retry will read it. Logged at error level, outcome `invalid`.
 */
async function deadLetterUnreadable(
  runner: PgBossRunner,
  fields: Record<string, unknown>,
  err: unknown,
): Promise<void> {
  await failJob(runner, String(fields.job_id), err, "invalid", true);
  runner.logger.error({ ...fields, outcome: "invalid", err }, "job data is not a notification; dead-lettered");
}

/** A pg-boss job as the worker core runs it: each notification run in its claim's transaction, its job taken in it. */
class PgBossJob implements JobTransport<JobVisit> {
  readonly jobId: string;
  readonly attempt: number;
  /** Whether the job's own notification ran (or never will): the job is done. */
  private ranOwn = false;

  readonly jobIdFor: (id: string) => string;

  constructor(
    private readonly job: ReadyJob,
    readonly own: NotificationJob,
    private readonly runner: PgBossRunner,
  ) {
    this.jobId = job.id;
    this.jobIdFor = runner.jobIdFor;
    this.attempt = job.attempt;
  }

  async redrivenAhead(): Promise<number | undefined> {
    return (await olderRedrivenWaits(this.runner, this.job, this.own)) ? REDRIVEN_WAIT_MS : undefined;
  }

  /** Another worker has it, or holds its subscription and runs it in its turn: the poll's own back-off. */
  recheckMs(): undefined {
    return undefined;
  }

  async postpone(inMs: number | undefined): Promise<JobVisit> {
    return inMs === undefined ? { done: false } : { done: false, retryInMs: inMs };
  }

  async settled(status: "completed" | "conflict"): Promise<JobVisit> {
    const { runner, job } = this;
    // Done before (or the id is another payload's): the job has nothing left to run. Often another
    // worker ran it between this worker's look and its claim, and completed the job already.
    await runner.boss
      .getDb()
      .executeSql(runner.table.settle, [runner.name, job.id])
      .catch(() => {});
    runner.logger.info(
      { notification_id: this.own.id, job_id: job.id, outcome: status === "completed" ? "duplicate" : "conflict" },
      "queued notification already settled; job completed",
    );
    return { done: true };
  }

  async run(current: Claimed): Promise<RunStep<JobVisit>> {
    const isOwn = current.claim.id === this.own.id;
    const outcome = await runInTransaction(current, this.runner, isOwn ? this.own : undefined);
    // Another run holds the record now and settles it (see `completedElsewhere`).
    if (outcome === "lease_lost") return "lease_lost";
    if (isOwn && outcome !== "job_missing" && outcome !== "store_unavailable") this.ranOwn = true;
    return "next";
  }

  drainsOn(): boolean {
    return !this.runner.stopping() && this.runner.store.takeNextInTransaction !== undefined;
  }

  takenEarly(): undefined {
    return undefined;
  }

  async finish(): Promise<JobVisit> {
    return this.ranOwn ? { done: true } : { done: false };
  }
}

/**
 * Run one claimed notification in the claim's transaction, its job taken in it too. Logs one line.
 * `known` is the notification's data when the job was read already (the worker's own job).
 */
async function runInTransaction(
  current: Claimed,
  runner: PgBossRunner,
  known: NotificationJob | undefined,
): Promise<RunOutcome> {
  const { claim } = current;
  const transaction = current.transaction!;
  const started = performance.now();
  const client = transaction.transaction as Queryable;
  const jobId = runner.jobIdFor(claim.id);
  let taken: TakenJob | undefined;
  try {
    [taken] = (await client.query(runner.table.take, [runner.name, jobId])).rows;
    // Archived by pg-boss's retention while it waited (a waiting notification of a long-held subscription): put back
    // in this transaction, and taken.
    if (!taken && (await client.query(runner.table.restore, [runner.name, jobId])).rows.length > 0)
      [taken] = (await client.query(runner.table.take, [runner.name, jobId])).rows;
  } catch {
    await transaction.rollback("store_unavailable");
    return "store_unavailable";
  }
  const fields = { notification_id: claim.id, job_id: jobId };
  if (!taken) {
    // Its job is gone (removed by hand, or already settled): nothing to run it from.
    await failUnrunnable(runner.store, claim, transaction, runner.logger, jobId, known === undefined);
    return "job_missing";
  }
  const read = known ? { job: known } : readQueuedJob(taken.data, runner.keys, taken.created_ms);
  if ("unreadable" in read) {
    await transaction.rollback("invalid");
    await deadLetterUnreadable(runner, fields, read.unreadable);
    return "invalid";
  }
  const data = read.job;
  // One count (see `runAttempt`): the worker's own claim was made with pg-boss's (counting on after a
  // redrive); one handed over from the subscription's lane (the worker's own too, once an older one of
  // its subscription ran first) is its job's.
  let attempt: number;
  try {
    attempt = await runAttempt(current, taken.retry_count + 1);
  } catch {
    await transaction.rollback("store_unavailable");
    return "store_unavailable";
  }
  // An ordered notification whose attempt fails with attempts left keeps its place at the head of its
  // subscription's lane, the subscription held until its retry: nothing later runs before it.
  const lane =
    claim.status === "claimed" &&
    claim.order !== undefined &&
    taken.retry_count < taken.retry_limit &&
    requeuesInLane(transaction);
  // Any other failed run is failed with its job in its transaction too: rolled back and then failed,
  // the job would be free in between, and another worker would run it again with the same count.
  const failed: FailedRun = { settled: false };
  const queueLagMs = Date.now() - data.receivedAt;
  const observation = observeJob({
    carrier: (taken.data as { trace?: unknown } | null)?.trace,
    queue: runner.name,
    queueLagMs,
    firstStart: attempt === 1,
  });
  let observeHandler: HandlerObserver = observation.handler;
  let settling = transaction;
  if (lane || failsWithin(transaction)) {
    try {
      ({ transaction: settling, observe: observeHandler } = await settlingInTransaction(
        transaction,
        jobFailurePolicy(runner, jobId, lane, data.notification, failed),
        observeHandler,
      ));
    } catch {
      return "store_unavailable";
    }
  }
  const result = await runClaim(
    runner,
    { claim, data, attempt, transaction: completingJob(settling, client, runner, jobId) },
    // A transaction's completion is its commit: nothing is written after it to retry. A run whose
    // transaction was lost (a frozen or cut-off worker) while another run took the record fails nothing.
    { retryCompletion: () => {}, observeHandler, leaseLost: leaseLostHere },
  ).catch((err: unknown) => {
    if (err instanceof LeaseLost) return "lease_lost" as const;
    throw err;
  });
  if (result === "lease_lost") {
    observation.end({ ...fields, attempt, outcome: result }, false);
    return result;
  }
  const line = {
    ...fields,
    event_type: data.notification.event_type,
    subscription_id: data.notification.resource?.id,
    attempt,
    outcome: result.outcome,
    queue_lag_ms: Math.round(queueLagMs),
    duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
  };
  observation.end(line, true);
  if ("err" in result) {
    const err = redactErrorInPlace(result.err, runner.redact, data.notification);
    // A handler's NonRetriableError goes to the dead letters now; its RetryAfterError sets when the retry starts.
    const decision = retryDecision(err);
    // A run cut off by the worker's close says nothing about the handler: no attempt is counted. A run
    // failed in its own transaction (kept in line, or failed with its job) needs nothing more.
    const retryInMs =
      runner.shutdown.aborted || failed.settled
        ? failed.retryInMs
        : await failJob(runner, jobId, err, result.outcome, decision.retry === "never", decision);
    logFailedRun(runner.logger, { ...line, err }, failedRunFate(decision, retryInMs, false), PG_BOSS_FAILURE_WORDS);
  } else runner.logger.info(line, "notification processed by worker");
  return result.outcome;
}

/** How a run's failure was settled in its transaction with its job, for its log line. */
interface FailedRun {
  /** True once the failure was settled in the transaction with its job (back in line, or failed). */
  settled: boolean;
  /** When its retry starts, when its handler's `RetryAfterError` set it. */
  retryInMs?: number;
}

/**
 * pg-boss's part of a failed run settled in its transaction (see `settlingInTransaction`): the job,
 * taken in it, is failed in it too, with pg-boss's own `fail` (retried after its back-off, or out of
 * attempts a dead letter). An ordered run with attempts left (`lane`) goes back in line, due when the
 * job's retry is; one its handler refused for good (NonRetriableError) is a dead letter now. A run cut
 * off by the worker's close counts no attempt: the job is left to run again at once.
 */
function jobFailurePolicy(
  runner: PgBossRunner,
  jobId: string,
  lane: boolean,
  notification: NotificationJob["notification"],
  failed: FailedRun,
): TransactionFailurePolicy {
  return {
    counts: () => !runner.shutdown.aborted,
    async requeue(err, outcome) {
      const decision = retryDecision(err);
      if (!lane || decision.retry === "never") return undefined;
      return async (handle) => {
        const db = handle as Queryable;
        await runner.boss.fail(runner.name, jobId, { outcome }, { db: executorOn(db) });
        // A RetryAfterError's delay in place of pg-boss's back-off, as for any job.
        if (decision.retry === "after") await db.query(runner.table.retryIn, [runner.name, jobId, decision.delayMs]);
        const [job] = (await db.query(runner.table.due, [runner.name, jobId])).rows;
        return job?.state === "retry" ? Math.ceil(job.due_in_ms) : undefined;
      };
    },
    failWith(err, outcome) {
      const decision = retryDecision(err);
      // pg-boss keeps the message.
      const { message } = redactErrorInPlace(err, runner.redact, notification);
      return async (handle) => {
        const db = handle as Queryable;
        if (decision.retry === "never") await db.query(runner.table.lastRun, [runner.name, jobId]);
        await runner.boss.fail(runner.name, jobId, { outcome, message }, { db: executorOn(db) });
        // pg-boss's `fail` has no delay of its own to take: its retry's start is moved to the handler's.
        if (decision.retry === "after") {
          const { rows } = await db.query(runner.table.retryIn, [runner.name, jobId, decision.delayMs]);
          if (rows.length > 0) failed.retryInMs = decision.delayMs;
        }
      };
    },
    settled(err, requeuedInMs) {
      failed.settled = true;
      const decision = retryDecision(err);
      if (requeuedInMs !== undefined && decision.retry === "after") failed.retryInMs = decision.delayMs;
    },
  };
}

/** The claim's transaction, whose commit also completes the job: the record and the job commit together. */
function completingJob(
  transaction: TransactionalClaim,
  client: Queryable,
  runner: PgBossRunner,
  jobId: string,
): TransactionalClaim {
  // The handler's own guard, closed the moment its run settles: the job's completion below goes
  // through the store's handle, and nothing the handler sends late can land beside it.
  const handlers = guardTransaction(client as PoolClient);
  return {
    result: transaction.result,
    transaction: handlers.handle,
    watchLoss: transaction.watchLoss?.bind(transaction),
    rollback(error) {
      handlers.close();
      return transaction.rollback(error);
    },
    detach: () => {
      handlers.close();
      return transaction.detach();
    },
    async commit(answer) {
      handlers.close();
      try {
        // pg-boss 10 reads the options after the output (its types leave the output out); it answers a count.
        const done = (await runner.boss.complete(runner.name, jobId, {}, { db: executorOn(client) })) as unknown as {
          affected: number;
        };
        if (done?.affected !== 1)
          throw coded(new Error("the job taken in this transaction could not be completed in it"), "MW_INTERNAL");
      } catch (err) {
        await transaction.rollback("commit_failed");
        throw err;
      }
      await transaction.commit(answer);
    },
  };
}

/**
 * Count a failed attempt on the job and hand it to pg-boss's `fail`: retried after its back-off while
 * attempts remain, else failed and copied to the dead-letter queue. The message is the redacted
 * error's. If PostgreSQL cannot be reached, the job simply runs again, the attempt uncounted.
 */
async function failJob(
  runner: PgBossRunner,
  jobId: string,
  err: unknown,
  outcome: string,
  last: boolean,
  decision?: RetryDecision,
): Promise<number | undefined> {
  const message = err instanceof Error ? err.message : String(err);
  const reason = err instanceof HandlerTimeoutError ? "handler_timeout" : outcome;
  try {
    const db = runner.boss.getDb();
    await db.executeSql(runner.table.countAttempt, [runner.name, jobId, last]);
    await runner.boss.fail(runner.name, jobId, { outcome: reason, message });
    // pg-boss's `fail` has no delay of its own to take: its retry's start is moved to the handler's.
    if (decision?.retry !== "after") return undefined;
    const { rows } = await db.executeSql(runner.table.retryIn, [runner.name, jobId, decision.delayMs]);
    return rows.length > 0 ? decision.delayMs : undefined;
  } catch (failure) {
    runner.logger.warn({ job_id: jobId, err: failure }, "could not record the failed attempt; the job runs again");
    return undefined;
  }
}
