import { DelayedError, type Job, UnrecoverableError } from "bullmq";
import type { Logger } from "pino";
import { type RetryDecision, retryDecision } from "../dispatch/retry-decision.js";
import type { RedactOptions } from "../logging/redact.js";
import { redactErrorInPlace } from "../logging/redact-error.js";
import { settlesWithin } from "../shared/time-limit.js";
import { otelApiLoading } from "../telemetry/load-api.js";
import { observeJob } from "../telemetry/observe-job.js";
import { failedRunFate, failedRunOutcome, logFailedRun } from "../worker/failed-run.js";
import { type NotificationJobData, notificationIn } from "../worker/job-data.js";
import {
  BULLMQ_FAILURE_WORDS,
  InvalidJobDataError,
  type JobOutcome,
  type JobRunner,
  processJob,
  WaitingForRetry,
} from "./process-job.js";

/** The longest putting a job back on close may take. */
const REQUEUE_TIMEOUT_MS = 5_000;

const isInvalid = (err: unknown): boolean => err instanceof InvalidJobDataError;

/** Stands for "the worker stopped waiting" in the race between a job and the shutdown signal. */
const STOPPED = Symbol("stopped");

/**
 * The BullMQ processor: run the job (`processJob`), log how it ended, and when the worker stops
 * waiting on close, put the job back for another worker instead of waiting for its handler. Each run
 * is observed (`observeJob`): its span joins the receiver's trace, and its log line says how long the
 * notification waited in the queue.
 */
export function jobProcessor(
  runner: JobRunner,
  logger: Logger,
  redact: RedactOptions,
  queue: string,
): (job: Job<NotificationJobData>, token?: string) => Promise<JobOutcome> {
  const untilStopped = shutdownRace(runner.shutdown);
  return async (job: Job<NotificationJobData>, token?: string): Promise<JobOutcome> => {
    const started = performance.now();
    // Only the first jobs wait, while the optional OpenTelemetry API is still being looked for.
    const loading = otelApiLoading();
    if (loading) await loading;
    // From the receiver's acknowledgement to this start; on a retry, the backoff is part of it.
    const queueLagMs = Date.now() - (typeof job.data?.receivedAt === "number" ? job.data.receivedAt : job.timestamp);
    const observation = observeJob({
      carrier: job.data?.trace,
      queue,
      queueLagMs,
      firstStart: (job.attemptsStarted ?? 1) <= 1,
    });
    const run = processJob(job, token, runner, observation.handler);
    const line = (outcome: string) => {
      const fields = {
        notification_id: job.data?.id ?? job.data?.notification?.id,
        event_type: job.data?.event_type ?? job.data?.notification?.event_type,
        job_id: job.id,
        job_attempt: job.attemptsMade + 1,
        outcome,
        queue_lag_ms: Math.round(queueLagMs),
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
      };
      // Postponed and requeued runs say nothing about the notification: they end the span, uncounted.
      observation.end(fields, outcome !== "postponed" && outcome !== "requeued");
      return fields;
    };
    let outcome: JobOutcome | typeof STOPPED;
    try {
      outcome = await untilStopped(run);
    } catch (thrown) {
      if (thrown instanceof WaitingForRetry) {
        logger.debug(line("postponed"), "subscription waits for a failed notification's retry; back when it is due");
        throw thrown;
      }
      if (thrown instanceof DelayedError) {
        logger.debug(line("postponed"), "notification held elsewhere or store unreachable; looking again shortly");
        throw thrown;
      }
      // BullMQ stores the message and stack in the failed job (`failedReason`, `stacktrace`).
      const err = redactErrorInPlace(thrown, redact, notificationOf(job, runner));
      const decision = retryDecision(err);
      const steered = steerRetry(job, err, decision);
      const final = steered instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const failed = failedRunOutcome(err, isInvalid);
      // BullMQ honours a handler's `RetryAfterError` as the failure's back-off (see `steerRetry`).
      const retryInMs = decision.retry === "after" && !final ? decision.delayMs : undefined;
      const fate = failedRunFate(decision, retryInMs, final);
      logFailedRun(logger, { ...line(failed), err, final }, fate, BULLMQ_FAILURE_WORDS);
      throw steered;
    }
    if (outcome === STOPPED) {
      // The handler may still finish in this process; if it does not, its claim lapses and another worker runs it.
      run.catch(() => {});
      line("requeued");
      // Bounded like every worker-side call: past it the job's lock lapses and the stalled check puts it back.
      await settlesWithin(job.moveToDelayed(Date.now(), token), REQUEUE_TIMEOUT_MS);
      throw new DelayedError();
    }
    if (outcome === "conflict")
      logger.warn(line(outcome), "notification id already used with a different payload; job dropped");
    else logger.info(line(outcome), "notification processed by worker");
    return outcome;
  };
}

/**
 * A handler's `NonRetriableError` or `RetryAfterError` as BullMQ takes it (see `retryDecision`): the
 * first as BullMQ's `UnrecoverableError`, so the job goes to the failed set now, whatever attempts are
 * left; the second with its delay as this failure's back-off. BullMQ reads the job's back-off when it
 * moves the failed job (`moveToFailed`), from this job object: set here, it counts the attempt and
 * delays the retry as any back-off does, and the job's stored options are left as they are. (Its
 * `moveToDelayed` with a `DelayedError` would not count an attempt: a handler always asking to wait
 * would never reach the failed set.)
 */
function steerRetry(job: Job, err: unknown, decision: RetryDecision): unknown {
  if (decision.retry === "never") {
    const message = err instanceof Error ? err.message : String(err);
    const unrecoverable = new UnrecoverableError(`non-retriable: ${message}`);
    if (err instanceof Error && err.stack) unrecoverable.stack = err.stack;
    return unrecoverable;
  }
  if (decision.retry === "after") job.opts.backoff = { type: "fixed", delay: decision.delayMs };
  return err;
}

/**
 * A race of each job's run against the worker's shutdown: what the run settles to, or `STOPPED` once
 * the signal aborts first. One listener on the signal tells every waiting run, instead of a listener,
 * a second promise and a `Promise.race` per job.
 */
function shutdownRace(signal: AbortSignal): <T>(task: Promise<T>) => Promise<T | typeof STOPPED> {
  const waiting = new Set<() => void>();
  signal.addEventListener(
    "abort",
    () => {
      for (const stop of waiting) stop();
      waiting.clear();
    },
    { once: true },
  );
  return <T>(task: Promise<T>) => {
    if (signal.aborted) return Promise.resolve(STOPPED);
    return new Promise<T | typeof STOPPED>((resolve, reject) => {
      const stop = () => resolve(STOPPED);
      waiting.add(stop);
      task.then(
        (value) => {
          waiting.delete(stop);
          resolve(value);
        },
        (err: unknown) => {
          waiting.delete(stop);
          reject(err);
        },
      );
    });
  };
}

/** The job's notification, for redacting its values out of an error; undefined when it cannot be read. */
function notificationOf(job: Job<NotificationJobData>, runner: JobRunner): unknown {
  try {
    return notificationIn(job.data, runner.keys);
  } catch {
    return undefined;
  }
}
