import { DelayedError, UnrecoverableError, type Job } from "bullmq";
import type { Logger } from "pino";
import { redactErrorInPlace } from "../logging/redact-error.js";
import type { RedactOptions } from "../logging/redact.js";
import type { NotificationJobData } from "./job-data.js";
import { processJob, type JobOutcome, type JobRunner } from "./process-job.js";

/** Stands for "the worker stopped waiting" in the race between a job and the shutdown signal. */
const STOPPED = Symbol("stopped");

/**
 * The BullMQ processor: run the job (`processJob`), log how it ended, and when the worker stops
 * waiting on close, put the job back for another worker instead of waiting for its handler.
 */
export function jobProcessor(
  runner: JobRunner,
  logger: Logger,
  redact: RedactOptions,
): (job: Job<NotificationJobData>, token?: string) => Promise<JobOutcome> {
  return async (job: Job<NotificationJobData>, token?: string): Promise<JobOutcome> => {
    const started = performance.now();
    const run = processJob(job, token, runner);
    const fields = () => ({
      notification_id: job.data?.id ?? job.data?.notification?.id,
      event_type: job.data?.event_type ?? job.data?.notification?.event_type,
      job_id: job.id,
      job_attempt: job.attemptsMade + 1,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    });
    let outcome: JobOutcome | typeof STOPPED;
    try {
      outcome = await untilAborted(run, runner.shutdown);
    } catch (thrown) {
      if (thrown instanceof DelayedError) {
        logger.debug(fields(), "notification held elsewhere or store unreachable; looking again shortly");
        throw thrown;
      }
      // BullMQ stores the message and stack in the failed job (`failedReason`, `stacktrace`).
      const err = redactErrorInPlace(thrown, redact);
      const final = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      logger.error({ ...fields(), err, final }, final ? "notification failed; left in the failed set" : "notification failed; will retry");
      throw err;
    }
    if (outcome === STOPPED) {
      // The handler may still finish in this process; if it does not, its claim lapses and another worker runs it.
      run.catch(() => {});
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (outcome === "conflict") logger.warn(fields(), "notification id already used with a different payload; job dropped");
    else logger.info({ ...fields(), outcome }, "notification processed by worker");
    return outcome;
  };
}

async function untilAborted<T>(task: Promise<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  if (signal.aborted) return STOPPED;
  let onAbort!: () => void;
  const stopped = new Promise<typeof STOPPED>((resolve) => {
    onAbort = () => resolve(STOPPED);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([task, stopped]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
