import { type ClaimedHooks, type ClaimedOutcome, claimedOrder, runClaimed } from "../dispatch/run-claimed.js";
import type { ClaimedOrStale, IdempotencyStore } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import { claimJob, type JobClaim, jobClaimRequest } from "./claim-job.js";
import { type FoundJobData, handedOverData, UNREACHABLE } from "./handed-over.js";
import type { NotificationJob } from "./job-data.js";
import { completedElsewhere, failUnrunnable, letGo } from "./let-go.js";
import { STORE_RETRY_MS } from "./recheck-delay.js";
import type { RunSettings } from "./run-settings.js";
import { takeNext } from "./take-next.js";
import type { Claimed, JobTransport, RunStep } from "./transport.js";

/**
 * The run of one queued job, whichever queue handed it over (`job` does what is the queue's own):
 * claim the job's notification with the worker's own owner token (taking over the receiver's queued
 * record at once, in a transaction with a store that claims in one), run it, and while it is an
 * ordered lane's, run each next notification the store hands over while the lane stays here.
 *
 * Waiting for someone else (a crashed worker's lease running out, another notification of the lane
 * running) and an unreachable store postpone the job without using an attempt: they say nothing about
 * the handler. A notification settled before ends the job, or (a lane's drain job whose runner died)
 * first runs what still waits in its lane, from the head.
 */
export async function runQueuedJob<End, Found extends FoundJobData>(
  job: JobTransport<End, Found>,
  settings: RunSettings,
): Promise<End> {
  const { own } = job;
  const owner = settings.nextOwner(job.jobId);
  if (own.order) {
    // Redriven after an older dead letter of its lane: that one goes back into the lane first.
    const wait = await job.redrivenAhead();
    if (wait !== undefined) return job.postpone(wait);
  }
  // The claim's lease counts from when it was asked for: the handler starts only with enough of it left.
  const claimSent = performance.now();
  let first: JobClaim;
  try {
    // In order, the claim checks the position again: something newer may have completed since the receiver's check.
    first = await claimJob(settings.store, jobClaimRequest(own, settings, owner, job.attempt));
  } catch {
    return job.postpone(STORE_RETRY_MS);
  }
  const { claim, transaction } = first;
  let current: Claimed | undefined;
  switch (claim.status) {
    case "completed":
    case "conflict": {
      const end = await job.settled(claim.status);
      if (end !== undefined) return end;
      // An ordered job is also its lane's drain job: the runner that held it may have died after its
      // own notification, so the job runs what still waits, from the head, before it ends.
      current = await nextInLane(job, settings, own.order!.key);
      break;
    }
    case "processing":
    case "queued":
      // Another worker runs this id, or holds the lane: that one runs this notification in its turn.
      // ("queued" only from a store that ignores a `take`: look again rather than drop the job.)
      return job.postpone(job.recheckMs(claim));
    default:
      // Asked for with the queue's count of this job: it counts the run when the claim is the job's own
      // (an older notification of its lane handed over in its place was counted by the lane).
      current = {
        claim,
        transaction,
        leaseFrom: claimSent,
        countedByQueue: job.attempt !== undefined && claim.id === own.id,
      };
  }
  while (current) {
    const step = await runCurrent(job, settings, current);
    if (step === "stop") break;
    if (step === "lease_lost") {
      // The claim is another process's now, and that one settles it; completed there already, nothing
      // failed here (said once, at info level). A lane's notification lost so leaves the lane to that one.
      await completedElsewhere(settings.store, current.claim, settings.logger, job.jobIdFor(current.claim.id));
      if (current.claim.id !== own.id) break;
      // Its own: the lane's next, if taken with the refused completion already, is let go too, and the
      // job comes back later to look.
      const early = await job.takenEarly();
      if (early?.current) await letGo(settings.store, early.current, early.currentTransaction);
      return job.postpone(undefined);
    }
    if (step !== "next") return step.end;
    const key = current.claim.order?.key;
    current = undefined;
    if (key === undefined || !job.drainsOn()) break;
    current = await nextInLane(job, settings, key);
  }
  return job.finish();
}

/**
 * Run one claimed notification, a lane's handed over with its data found first (see `LaneLookups`).
 * Data out of reach is not data gone: the claim is let go unrun, and the drain stops here (this job
 * comes back for the lane). Data gone is kept as a dead letter, and the record failed (`failUnrunnable`);
 * a dead letter that could not be written lets the claim go as well, to be tried again later.
 */
async function runCurrent<End, Found extends FoundJobData>(
  job: JobTransport<End, Found>,
  settings: RunSettings,
  current: Claimed,
): Promise<RunStep<End>> {
  const { claim, transaction } = current;
  const lookUps = job.lookUps;
  if (!lookUps || claim.id === job.own.id) return job.run(current);
  const handed = await handedOverData(claim, settings.keys, lookUps.find);
  if (handed !== undefined && handed !== UNREACHABLE) return job.run(current, handed);
  if (handed === UNREACHABLE || !(await lookUps.keepUnrunnable(claim))) {
    await letGo(settings.store, claim, transaction);
    lookUps.leftForLater();
    return "stop";
  }
  await failUnrunnable(settings.store, claim, transaction, settings.logger, job.jobIdFor(claim.id), true);
  return "next";
}

/**
 * The lane's next notification, claimed for this job: the one handed over with the last completion,
 * else asked for now. Undefined when none waits, or the store could not be asked (the lane's
 * notifications still wait, and a later look at one of their jobs runs them).
 */
async function nextInLane<End>(
  job: JobTransport<End>,
  settings: RunSettings,
  key: string,
): Promise<Claimed | undefined> {
  // Taken early, a failed take (the completion's connection broke) is asked again now.
  const taken =
    (await job.takenEarly()) ??
    (await takeNext(settings.store, key, settings.nextOwner(job.jobId), settings.leaseMs, settings.timeoutMs));
  return taken?.current
    ? { claim: taken.current, transaction: taken.currentTransaction, leaseFrom: taken.sentAt }
    : undefined;
}

/** How a run whose claim went to another process ends (`leaseLostHere`): its transport answers `lease_lost`. */
export class LeaseLost extends Error {}

/**
 * The `leaseLost` hook of a queue's runs: someone else holds the record now (or this claim could not
 * be confirmed live before the handler started); whether it completes there decides what the job
 * does next (see `runQueuedJob`).
 */
export const leaseLostHere = (): Promise<never> => Promise.reject(new LeaseLost());

/** One claimed notification's run, beside the worker's settings. */
export interface ClaimRun {
  claim: ClaimedOrStale;
  /** The notification, its headers and when it was received, as its job data says. */
  data: NotificationJob;
  /** `ctx.attempt`: the run this is, as the record or the queue counts it. */
  attempt: number;
  /** The claim's transaction (the handler writes in it; the outcome is its commit or rollback), if any. */
  transaction?: TransactionalClaim | undefined;
  /** See `ClaimedRun.leaseFrom`. */
  leaseFrom?: number | undefined;
  /** The store to complete in, when not the settings' own (a completion that takes the lane's next too). */
  store?: IdempotencyStore | undefined;
}

/**
 * Run a claimed notification's handler under the worker's time limit and lease, its `ctx.signal`
 * aborted too when the worker gives up waiting on close, and record its outcome under the claim's
 * owner. The queue's own part goes in `hooks`: what a lost claim, a failed run and a completion the
 * store did not take mean for its job.
 */
export function runClaim(
  settings: RunSettings,
  run: ClaimRun,
  hooks: Omit<ClaimedHooks, "stop">,
): Promise<ClaimedOutcome> {
  const { claim, data } = run;
  return runClaimed(
    {
      // Named one by one, not spread from the settings: a spread of that many fields makes a
      // dictionary-mode object per run, most of a job's own allocation.
      store: run.store ?? settings.store,
      handlers: settings.handlers,
      timeoutMs: settings.timeoutMs,
      leaseMs: settings.leaseMs,
      ctxLogger: settings.ctxLogger,
      platform: settings.platform,
      notification: data.notification,
      claim,
      attempt: run.attempt,
      headers: data.headers,
      receivedAt: data.receivedAt,
      order: claimedOrder(claim.order, claim, settings.onStale),
      transaction: run.transaction,
      leaseFrom: run.leaseFrom,
    },
    { ...hooks, stop: settings.shutdown },
  );
}
