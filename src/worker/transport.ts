import type { ClaimedOrStale, ClaimResult } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import type { FoundJobData, HandedOver, JobDataLookup } from "./handed-over.js";
import type { NotificationJob } from "./job-data.js";
import type { Taken } from "./take-next.js";

/** A notification claimed for this job's run: its own, or a lane's next one handed over after it. */
export interface Claimed {
  claim: ClaimedOrStale;
  /** The transaction it was claimed in, with a store that claims in one (its handler runs in it). */
  transaction?: TransactionalClaim | undefined;
  /** `performance.now()` when the request that leased it was sent: the handler starts only with enough lease left. */
  leaseFrom: number;
  /** True when it was claimed with the queue's count of the job's runs (`JobTransport.attempt`): see `runAttempt`. */
  countedByQueue?: boolean;
}

/** A claim the job's record refused because someone else holds it (or its receiver still queues it). */
export type HeldClaim = Extract<ClaimResult, { status: "processing" | "queued" }>;

/**
 * What the run of one claimed notification tells the drain: on to the lane's next, stop here, end the
 * job now, or `lease_lost`: the claim went to another process before its run could be recorded (see
 * `runQueuedJob` for what the job does then, and `completedElsewhere`).
 */
export type RunStep<End> = "next" | "stop" | "lease_lost" | { end: End };

/**
 * How a queue whose lanes hand over notifications without their job finds their data (see
 * `handedOverData`), and keeps one it cannot find. A queue that takes each notification's own job in
 * its run (pg-boss) has none of these: its run finds the job, or meets it gone.
 */
export interface LaneLookups<Found extends FoundJobData> {
  /** The notification's job data, when the lane did not carry it. */
  find: JobDataLookup<Found>;
  /** Keep a notification with nothing to run it from as a dead letter every redrive finds; false when it could not be written. */
  keepUnrunnable(claim: ClaimedOrStale): Promise<boolean>;
  /** A lane's notification was let go unrun (its data out of reach): this job comes back for the lane later. */
  leftForLater(): void;
}

/**
 * What a queue does for the worker core with one job it handed over (see `runJob`): the few verbs
 * where BullMQ and pg-boss differ. `End` is what the queue's processor makes of the job's end:
 * BullMQ's job value (or the error it is failed or postponed with), pg-boss's next look at the job.
 * A transport is made per job and keeps that job's state between the calls.
 */
export interface JobTransport<End, Found extends FoundJobData = FoundJobData> {
  /** The job's id in its queue: the scope of the owner tokens of the claims made for it. */
  readonly jobId: string;
  /** The id of the job of the notification `id` in this queue (for the log lines about it). */
  jobIdFor(id: string): string;
  /** The job's own notification, read and validated (data that is not one, the transport settled itself). */
  readonly own: NotificationJob;
  /** The queue's count of this run (its runs so far, plus one) for the record to keep; undefined: a lane counts its own. */
  readonly attempt: number | undefined;
  /**
   * An ordered job redriven behind an older dead letter of its lane that has not gone back in line yet:
   * how long to wait before looking again (undefined: go ahead).
   */
  redrivenAhead(): Promise<number | undefined>;
  /** How long a job whose record is held elsewhere waits; undefined: until the queue next looks at it. */
  recheckMs(held?: HeldClaim): number | undefined;
  /** Put the job back to wait `inMs` (undefined: see `recheckMs`) without using one of its attempts. */
  postpone(inMs: number | undefined): Promise<End>;
  /**
   * The job's notification was settled before (completed, or its id another payload's): the job's end,
   * or undefined when the job runs its lane on from the head first (a drain job whose runner died).
   */
  settled(status: "completed" | "conflict"): Promise<End | undefined>;
  /** See `LaneLookups`: set when the lane's notifications are run from data found beside their claim. */
  readonly lookUps?: LaneLookups<Found> | undefined;
  /**
   * Run one claimed notification: the job's own (`claim.id === own.id`) or a lane's next, whose data
   * (`handed`) the core found first with the transport's `lookUps`, if it has them.
   */
  run(current: Claimed, handed?: HandedOver<Found>): Promise<RunStep<End>>;
  /** Whether the drain takes the lane's next notification after one ran (not while the worker closes). */
  drainsOn(): boolean;
  /**
   * The lane's next notification, when the run asked for it already (with its completion); else
   * undefined. Handed over once: a second call answers undefined until a run takes another.
   */
  takenEarly(): Promise<Taken | undefined> | undefined;
  /** The drain is over: the job's end. */
  finish(): Promise<End>;
}
