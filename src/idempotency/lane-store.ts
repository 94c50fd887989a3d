import type { Awaitable, ClaimedOrStale, ClaimHandle, StoredAnswer } from "./claim.js";

/**
 * Ordered lanes: a lane is one order key's (a subscription's, by default) notifications waiting to
 * run, in position order. A store offers its lanes as `IdempotencyStore.lanes`, one of two shapes,
 * each whole or not at all:
 *
 * - `LaneStore`: the lane's next notification for the worker that finished one (`takeNext`), and
 *   the dead letter holding a lane (`heldBy`, `heldLanes`). Each notification keeps a job of its own;
 *   the lane's order comes from the claims (`the claims' `order``). postgresStore is one.
 * - `DrainedLaneStore`: the store keeps the lane itself and one drain job runs it (a notification
 *   appended has no job of its own): append, complete and take next, retry in the lane, fail in the
 *   lane (holding it), and the sweep's look at stalled lanes. memoryStore and redisStore are ones.
 *
 * A store without `lanes` still claims in order; a worker then runs a lane's notifications one per
 * lease as their jobs come back, one job per notification.
 */
export interface LaneStore {
  /**
   * With the key free, claim the first notification waiting in the key's lane (queued in order) for
   * `owner`, holding the key: the worker that just finished one runs the next at once. Undefined when
   * none waits, the key is held, or the first is still being handed to the queue. A runner that finds
   * the lane empty stops in the same step (see `DrainedLaneStore.append`).
   */
  takeNext(order: { key: string }, owner: string, leaseMs: number): Awaitable<ClaimedOrStale | undefined>;
  /** The id of the dead letter holding the order key's lane (see `DrainedLaneStore.fail`), if one does. */
  heldBy(order: { key: string }): Awaitable<string | undefined>;
  /** The lanes a dead letter holds now: how many, and the one held longest. For `health()`. */
  heldLanes(): Awaitable<HeldLanes>;
}

/**
 * A lane kept whole in the store and run by one drain job at a time (see `LaneStore`). Its
 * notifications carry no job of their own, so every part below is needed for none to be lost: a store
 * offers all of it or none.
 */
export interface DrainedLaneStore extends LaneStore {
  /**
   * Hand a receiver's claim for a queue, made in order, over to its key's lane as `markQueued` does,
   * with no job of its own, and answer in the same atomic step whether the lane has a runner (a worker
   * running it, or a drain job on its way). Without one the answer is `wake: true` and the lane counts
   * as having one for `leaseMs`: the caller queues the drain job. A runner that finds the lane empty
   * stops in one step with clearing that mark (`takeNext`), so no append is left without a runner.
   * `IdempotencyStore.release` of an appended claim lets go of the runner it woke too.
   */
  append(claim: ClaimHandle, leaseMs: number): Awaitable<LaneAppend>;
  /**
   * `complete` for a claim made in order, and in the same step `takeNext` of its key for `next.owner`:
   * a runner draining a lane hands itself the next notification with the completion, in one round
   * trip. `next` is undefined when the completion was refused or none could be handed over.
   */
  completeAndTakeNext(
    claim: ClaimHandle,
    answer: StoredAnswer,
    next: { owner: string; leaseMs: number },
  ): Awaitable<{ completed: boolean; next?: ClaimedOrStale | undefined }>;
  /**
   * A run of the lane (a claim made in order by a worker) that failed with attempts left: the record
   * goes back, queued, into its lane at its position, with its attempts, its error and the job data kept
   * with it, to be retried no sooner than `delayMs` from now. Until then nothing behind it is handed out
   * (`takeNext` answers none, a worker's claim `processing` with the time left), so the lane keeps
   * position order through a retry. False when the claim is no longer the caller's.
   */
  retry(claim: ClaimHandle, error: string, delayMs: number): Awaitable<boolean>;
  /**
   * A run of the lane that failed its last attempt (a dead letter): failed, as `IdempotencyStore.fail`
   * does. On a lane whose policy is `hold` (`OrderClaim.onDeadLetter`, kept from the receivers' claims)
   * the record also stays at its place in the lane, and nothing behind it is handed out (`takeNext`
   * answers none, a worker's claim `processing`) until it is run again (a worker's claim of it, from
   * its redriven job, takes it first) or settled by a person (completed: discarded). Answers `held`
   * when it holds the lane, else as `fail`.
   */
  fail(claim: ClaimHandle, error: string): Awaitable<boolean | "held">;
  /**
   * Whether the lane is being run now: a worker holds the key under a live lease, a runner put a
   * failed notification back for its retry (`retry`) and comes back for it, or a dead letter holds it.
   * The queue's sweep asks it before taking a waiting notification, which has no job of its own, for
   * one whose job was lost. (A drain job merely on its way is not counted: it may be the job that was lost.)
   */
  running(order: { key: string }): Awaitable<boolean>;
  /** Whether the lane holds any notification (the sweep drops a lane's copy once it is empty). */
  waiting(order: { key: string }): Awaitable<boolean>;
  /**
   * The lanes the queue's sweep looks at from the store's side, up to `limit`: lanes with notifications
   * waiting (or a holder that died, put back in line) whose last append was before `before` (epoch
   * ms) and that no worker holds under a live lease, no runner waits to retry, and no dead letter
   * holds. The store keeps an index of lanes for it, written with each append; a lane found empty
   * leaves it, and a lane looked at is not answered again until `before` passes its look, so
   * successive calls page on.
   */
  stalled(query: StalledLanesQuery): Awaitable<StalledLane[]>;
  /**
   * Wake a lane `stalled` answered, whose drain job the queue no longer has: unless it was run or
   * woken since (its drain is no longer `lane.drain`), its head becomes the notification whose job runs
   * it, marked as the lane's runner for `leaseMs`. Answers the head and its job data for the sweep to
   * queue that job with; undefined when there is nothing to wake.
   */
  wake(lane: StalledLane, leaseMs: number): Awaitable<WokenLane | undefined>;
}

/** Each shape's calls by name, for a wrapper that passes every one through (a lane object may be a class's). */
export const LANE_CALLS = ["takeNext", "heldBy", "heldLanes"] as const satisfies readonly (keyof LaneStore)[];
export const DRAINED_LANE_CALLS = [
  ...LANE_CALLS,
  "append",
  "completeAndTakeNext",
  "retry",
  "fail",
  "running",
  "waiting",
  "stalled",
  "wake",
] as const satisfies readonly (keyof DrainedLaneStore)[];

/** The store's lanes when it keeps them whole (`DrainedLaneStore`), else undefined. */
export function drainedLanes(store: { readonly lanes?: LaneStore | undefined }): DrainedLaneStore | undefined {
  const lanes = store.lanes;
  return lanes && typeof (lanes as Partial<DrainedLaneStore>).append === "function"
    ? (lanes as DrainedLaneStore)
    : undefined;
}

/**
 * The lanes held by a dead letter (`ordering.onDeadLetter: "hold"`): nothing behind each runs until a
 * person redrives or discards it.
 */
export interface HeldLanes {
  /** How many order keys (subscriptions, by default) are held. */
  count: number;
  /** The lane held longest: its order key, the dead letter holding it, and since when (epoch ms). */
  oldest?: { key: string; id: string; since: number };
}

/**
 * A lane the store found stalled (`DrainedLaneStore.stalled`): notifications wait in it and no
 * worker runs it. Whether a job that would run it is still in the queue is the queue's to say.
 */
export interface StalledLane {
  /** The order key (a subscription, by default). */
  key: string;
  /** The notification first in line. */
  head: string;
  /** The notification whose job was queued to run the lane last (its drain job), when known. */
  drain?: string;
}

/** What the queue's sweep asks `DrainedLaneStore.stalled` for. */
export interface StalledLanesQuery {
  /** Lanes last appended to (or looked at) before this, epoch ms. */
  before: number;
  limit: number;
  /**
   * The sweeping queue (`prefix:name`): another queue's lanes (see `appendedFor`) are neither answered
   * nor marked looked at, so their own queue's sweep finds them.
   */
  queue?: string;
  /**
   * A lane a receiver woke at or after this (epoch ms) is not answered: the add of its drain job may
   * still be on its way. Default `before`.
   */
  wokenBefore?: number;
}

/** A lane woken by the sweep (`DrainedLaneStore.wake`): its head, and the job data kept with it. */
export interface WokenLane {
  id: string;
  /** The job data its receiver kept with it in the lane; absent when it was appended without. */
  carried?: string;
}

/** The longest a lane grows by default before a receiver's claim for a queue is refused. */
export const DEFAULT_LANE_MAX_LENGTH = 10_000;

/** The option bounding a store's lanes. */
export interface LaneMaxLengthOption {
  /**
   * With `ordering` through a durable queue: the most notifications one subscription's lane holds;
   * one more is answered 503 with `Retry-After`, and the sender keeps it. Default 10,000.
   */
  laneMaxLength?: number;
}

/** The store's lane bound. */
export function laneMaxLengthOf(options: LaneMaxLengthOption): number {
  return options.laneMaxLength ?? DEFAULT_LANE_MAX_LENGTH;
}

/** What `DrainedLaneStore.append` answers: whether the record was handed over, and whether a drain job must be queued. */
export interface LaneAppend {
  queued: boolean;
  wake: boolean;
}
