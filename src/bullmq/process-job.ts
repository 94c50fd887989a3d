import { DelayedError, UnrecoverableError, type Job } from "bullmq";
import type { Logger } from "pino";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { Handler, HandlerHooks, SubscriptionHandlers } from "../dispatch/handlers.js";
import { retryInBackground } from "../dispatch/retry-in-background.js";
import { runClaimed } from "../dispatch/run-claimed.js";
import { validationMessage } from "../schema/validation-message.js";
import { subscriptionNotificationSchema, type SubscriptionNotification } from "../schema/index.js";
import type { OrderClaim } from "../idempotency/store.js";
import { claimedOrder } from "../dispatch/claimed-order.js";
import { notificationIn, type NotificationJobData } from "./job-data.js";
import { SealError, type SealingKey } from "./seal.js";
import type { HandlerObserver } from "../dispatch/handler-observer.js";

/** A job's data once opened and validated. */
interface ReadJobData {
  notification: SubscriptionNotification;
  headers: Record<string, string>;
  receivedAt: number;
  fingerprint: string;
  order?: OrderClaim;
}

/** Job data that cannot be opened or is not a notification: it goes straight to the failed set. */
export class InvalidJobDataError extends UnrecoverableError {}

/** How a job ended without an error; also the job's return value. */
export type JobOutcome = "processed" | "unhandled" | "stale" | "duplicate" | "conflict";

export interface JobRunner {
  store: IdempotencyStore;
  handlers: SubscriptionHandlers & HandlerHooks;
  /** For jobs claimed in order that are stale by the time they run. */
  onStale?: Handler | undefined;
  leaseMs: number;
  timeoutMs: number;
  /** Base for `ctx.log`, with the receiver's redaction (see `handlerLogger`). */
  ctxLogger: Logger;
  /** A token unique to this run: complete/fail/extend succeed only while it owns the record. */
  nextOwner: (job: Job) => string;
  /** Aborted when the worker gives up waiting for running handlers on close. */
  shutdown: AbortSignal;
  /** Keys that open sealed job data. */
  keys: readonly SealingKey[];
}

/** Thrown after a job was put back to wait without using one of its attempts. */
class Postponed extends DelayedError {}

/** When the record is held by someone else: first look again soon, then back off, up to this. */
const RECHECK_MIN_MS = 50;
const RECHECK_MAX_MS = 5_000;
/** When the store cannot be reached: look again after this long. */
const STORE_RETRY_MS = 1_000;

/**
 * Run one notification job: validate its data, claim the record with the worker's own token, run the
 * handler, and complete or fail the record. A handler error fails the record and is rethrown, so
 * BullMQ's attempts and backoff apply. Waiting for someone else (a receiver that has not yet marked
 * the record queued, a crashed worker's lease running out) and an unreachable store postpone the job
 * without using an attempt: they say nothing about the handler.
 */
export async function processJob(
  job: Job<NotificationJobData>,
  token: string | undefined,
  runner: JobRunner,
  observeHandler?: HandlerObserver,
): Promise<JobOutcome> {
  const { notification, headers, receivedAt, fingerprint, order } = readJobData(job, runner.keys);
  const id = notification.id;
  const owner = runner.nextOwner(job);

  let claim;
  try {
    // In order, the claim checks the position again: something newer may have completed since the receiver's check.
    claim = await runner.store.claim({
      id,
      fingerprint,
      owner,
      leaseMs: runner.leaseMs,
      takeQueued: true,
      ...(order ? { order } : {}),
    });
  } catch {
    return postpone(job, token, STORE_RETRY_MS);
  }
  switch (claim.status) {
    case "completed":
      return "duplicate";
    case "conflict":
      return "conflict";
    case "processing":
      // Usually the receiver that added this job, a moment before it marks the record queued; in
      // order, also another notification of the subscription running now.
      return postpone(job, token, Math.min(claim.retryAfterMs, recheckDelay(job)));
    case "queued":
      // Only a store that ignores `takeQueued` answers this; look again rather than drop the job.
      return postpone(job, token, recheckDelay(job));
  }

  // The receiver's claim that handed the notification to the queue counted as one; runs are the rest.
  const attempt = Math.max(1, claim.attempt - 1);
  const { outcome } = await runClaimed(
    { ...runner, notification, claim, attempt, headers, receivedAt, order: claimedOrder(order, claim, runner.onStale) },
    {
      stop: runner.shutdown,
      // Someone else holds the record now; whether it completes there decides what this job does next.
      leaseLost: () => postpone(job, token, recheckDelay(job)),
      failed: (err) => {
        throw err;
      },
      // The handler's effect happened, so the job must not fail now: a retry would run the handler
      // again once the lease ran out. Keep trying to record it while the job holds its place.
      retryCompletion: (write) => retryInBackground(write),
      observeHandler,
    },
  );
  return outcome as "processed" | "unhandled" | "stale";
}

function readJobData(job: Job<NotificationJobData>, keys: readonly SealingKey[]): ReadJobData {
  const data = job.data as Partial<NotificationJobData> | undefined;
  let carried: unknown;
  try {
    carried = notificationIn(data, keys);
  } catch (err) {
    // No retry opens it with the same keys: straight to the failed set, for redrive once the key is given.
    throw new InvalidJobDataError(err instanceof SealError ? err.message : "job data could not be read");
  }
  const parsed = subscriptionNotificationSchema.safeParse(carried);
  // Bad data stays bad however often it is retried: straight to the failed set, with the reason.
  if (!parsed.success) throw new InvalidJobDataError(`job data: ${validationMessage(parsed.error.issues)}`);
  if (typeof data!.fingerprint !== "string") throw new InvalidJobDataError("job data has no payload fingerprint");
  const order = data!.order;
  if (
    order !== undefined &&
    (typeof order?.key !== "string" || (order.position !== undefined && typeof order.position !== "string"))
  ) {
    throw new InvalidJobDataError("job data has a malformed order (key and position must be strings)");
  }
  return {
    ...(order ? { order } : {}),
    notification: parsed.data,
    headers: data!.headers ?? {},
    receivedAt: typeof data!.receivedAt === "number" ? data!.receivedAt : job.timestamp,
    fingerprint: data!.fingerprint,
  };
}

/** 50 ms, then doubling with each start of this job that used no attempt, up to 5 s. */
function recheckDelay(job: Job): number {
  const postponements = Math.max(0, (job.attemptsStarted ?? 1) - job.attemptsMade - 1);
  return Math.min(RECHECK_MAX_MS, RECHECK_MIN_MS * 2 ** Math.min(postponements, 10));
}

async function postpone(job: Job, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + Math.max(1, delayMs), token);
  throw new Postponed();
}
