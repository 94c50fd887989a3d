import type { ClaimedOrStale, OrderClaim } from "../idempotency/store.js";
import type { SubscriptionNotification } from "../schema/index.js";
import type { CloseOptions } from "../shared/close-options.js";
import type { QueueJobs } from "./queue-jobs.js";

/** A validated, claimed notification handed to a queue. */
export interface QueuedNotification {
  id: string;
  fingerprint: string;
  notification: SubscriptionNotification;
  headers: Readonly<Record<string, string>>;
  receivedAt: number;
  /**
   * The receiver's claim token. A worker that takes the job before the receiver has marked the record
   * queued (or after the receiver died between the two steps) may take that claim over.
   */
  owner?: string;
  /** With `ordering`: the key and position it was claimed under; a worker claims it again under them. */
  order?: OrderClaim;
  /** W3C trace context (`traceparent`, `tracestate`) of the receiver's span, when it is tracing. */
  trace?: Record<string, string>;
  /**
   * Runs the handler under the receiver's claim; in-process queues call it, durable queues ignore it.
   * It resolves to `RunAgain` when the handler asked to be retried later (`RetryAfterError`) and the
   * claim is still held for it: the queue calls `run` again once that time has passed.
   */
  run: () => Promise<void | RunAgain>;
  /**
   * Set for an ordered notification that joins its subscription's lane (a queue with `wake`, a
   * store with `lanes.append`): the queue keeps it durably but queues no job for it; `wake` does.
   */
  mailbox?: true;
  /**
   * With `lane`: the job data `carry` made for it, which the store keeps in the lane too; the
   * queue keeps this same data (the worker finds the notification under one seal either way).
   */
  carried?: string;
  /**
   * With `lane` and `carried`: the store already keeps it in the lane with that data (the claim
   * appended it), which the lane keeps until it is done, so `enqueue` keeps nothing of its own; `wake`
   * (its subscription had no runner) adds the drain job. `found`: the store finds a lane whose drain
   * job was lost itself (`lanes.stalled`); without, `wake` keeps this notification's
   * copy beside the drain job, by which the sweep finds the lane. (A queue on a Redis Cluster keeps
   * each one's copy on another master all the same: see `bullmqQueue`.)
   */
  inLane?: { wake: boolean; found?: true };
}

/** A notification read back from the data its queue kept with its claim (`readCarried`). */
export interface CarriedNotification {
  notification: SubscriptionNotification;
  fingerprint: string;
  headers: Record<string, string>;
  receivedAt: number;
}

/** A queued run's request to be run again, no sooner than `runAgainInMs` from now. */
export interface RunAgain {
  runAgainInMs: number;
}

/**
 * The receiver's `queue` option. `enqueue` resolves once the notification is accepted (durably, for a
 * `durable` queue) and rejects when it cannot be: the receiver then answers 503 and releases the claim.
 */
export interface NotificationQueue {
  /** Durable queues survive the receiver; their records are marked `queued` for a worker to take over. */
  readonly durable: boolean;
  enqueue(item: QueuedNotification): Promise<void>;
  /**
   * Add the job inside the claim's open database transaction (`transaction` is the store's, as
   * `ctx.transaction` gets it), so the claim, the record's queued mark and the job commit together. A
   * receiver whose store claims in a transaction that can be committed queued uses it instead of `enqueue`.
   */
  enqueueInTransaction?(item: QueuedNotification, transaction: unknown): Promise<void>;
  /**
   * Whether a job for the notification `id` is still in the queue (waiting, delayed, active or about to
   * retry). A receiver that finds the record queued asks, and queues the notification again if not.
   */
  has?(id: string): Promise<boolean>;
  /**
   * Queue the job that runs a subscription's lane from its head, for a notification kept with
   * `lane` whose store said its subscription had no runner. A queue without it gets one job per
   * ordered notification.
   */
  wake?(item: QueuedNotification): Promise<void>;
  /**
   * The job data of an ordered notification about to join its subscription's lane, serialised as
   * the queue keeps it (sealed with its key, or card numbers masked; never card verification data), for
   * the store to keep in the lane with the claim (`AppendClaim.carried`): the receiver then hands
   * the notification over in its claim, and the worker gets the data with the notification. A queue
   * that is not durable makes the same data for the store to keep with its claim (`kept.keep`).
   */
  carry?(item: Omit<QueuedNotification, "run" | "mailbox" | "carried">): string;
  /**
   * A queue that is not durable, on a store that keeps its notifications (`IdempotencyStore.kept`):
   * the notification in the data `carry` made for it, opened and validated, for a receiver that takes
   * over a claim whose holder died. Undefined when it cannot be read (no key opens it, no schema accepts
   * it, or it names another record than the claim's).
   */
  readCarried?(claim: ClaimedOrStale): CarriedNotification | undefined;
  /** Its jobs as the console shows and acts on them (a durable queue's; see `QueueJobs`). */
  readonly jobs?: QueueJobs;
  /** Resolves when the queue would accept a notification now; rejects when not. Used by `receiver.health()`. */
  ping?(): Promise<void>;
  /** Stop accepting and wait for accepted work at most `timeoutMs` (the queue's own default when not given). */
  close?(options?: CloseOptions): Promise<void>;
}
