/** A value or a promise of it: the memory store answers synchronously, the Redis store does not. */
export type Awaitable<T> = T | Promise<T>;

/** The answer a completed record keeps, for inspection (`get`); claims never need it back. */
export interface StoredAnswer {
  processed: boolean;
  message: string;
}

/**
 * A claim on a notification's record, named by what the caller means to do with it (`kind`). A store
 * decides each kind as docs/stores.md "Your own store" says; what one kind does not take cannot be
 * asked for with it (an order key on `enqueue`, a hand-off on `append`...).
 *
 * - `run` (or no `kind`): a receiver (or the reconciler) runs the handler now, holding the id, and
 *   with `order` its key too. A queued record is answered `queued`.
 * - `enqueue`: a receiver hands an unordered notification to a durable queue.
 * - `append`: a receiver hands an ordered notification to a durable queue: it joins its key's lane.
 * - `take`: a worker takes the queued record its job names, to run it.
 */
export type ClaimRequest = RunClaim | EnqueueClaim | AppendClaim | TakeClaim;

/** What every claim says: the record, the payload's fingerprint, the claim's owner and lease. */
export interface ClaimBase {
  id: string;
  fingerprint: string;
  /** A token unique to this attempt; complete/fail/extend succeed only when it still owns the record. */
  owner: string;
  leaseMs: number;
  /**
   * The time limit the claimed run's handler gets (0 or absent: none). A store that holds a transaction
   * open for the run (`claimInTransaction`) bounds that transaction on the server by about this much,
   * so a frozen or partitioned holder cannot keep the id, or a timed-out statement run on, for ever.
   */
  handlerTimeoutMs?: number;
  /**
   * What the console lists and filters the record by (see `ListedAs`). Written with the record and
   * kept across its later writes; a claim without it leaves the record's as it was.
   */
  listedAs?: ListedAs;
}

/**
 * A receiver's claim to run the handler now (or, for an in-process queue, soon in this process, holding
 * the claim meanwhile). Absent `kind` means this one.
 */
export interface RunClaim extends ClaimBase {
  kind?: "run";
  /** Claim in order: one live claim per key at a time, and nothing older than the key's newest completion. */
  order?: OrderClaim;
  /**
   * An in-process queue's claim of an unordered notification, on a store that keeps notifications
   * (`IdempotencyStore.kept`): the notification's job data as the queue keeps it (sealed with its
   * `encryptionKey`, or card numbers masked; never card verification data), kept with the record by
   * the claim itself, as `kept.keep` would keep it after the claim: the notification is kept before
   * it is acknowledged in one round trip, not two. A store that keeps it answers `claimed` with
   * `kept: true`; one that ignores it (and any store, with `order`) answers as for any run, and the
   * receiver calls `kept.keep` next.
   */
  carried?: string;
}

/**
 * A receiver's claim made to hand an unordered notification to a durable queue. A queued record is
 * answered `queued` (accepted before), unless `takeOver`.
 */
export interface EnqueueClaim extends ClaimBase {
  kind: "enqueue";
  /** Unordered: an ordered notification for a queue is an `append`. */
  order?: undefined;
  /**
   * Write the record queued at once, keeping this claim's owner and lease as its hand-off lease, and
   * answer `claimed` with `queued: true`, so no `markQueued` follows the job's add. Until that lease
   * lapses, a `takeOver` of the record is answered `processing`: the job may be on its way. Workers
   * take it as any queued record. A store may ignore it (then `markQueued` follows).
   */
  queueAtClaim?: boolean;
  /**
   * The queued record's job is missing (lost in a failover, removed by hand): take the record over
   * and queue the notification again, rather than answer `queued`.
   */
  takeOver?: boolean;
}

/**
 * A receiver's claim made to hand an ordered notification to a durable queue. The record joins its
 * key's lane in position order instead of holding the key: it never waits for another notification
 * of its key (only staleness is checked), and workers run the lane in order. Joining the lane is no
 * run: the record's `attempts` stay as they were, and each worker's take of it counts one, so the
 * record, the job and `ctx.attempt` say the same. A lane at the store's `laneMaxLength` answers
 * `processing` with `full: true`.
 */
export interface AppendClaim extends ClaimBase {
  kind: "append";
  order: OrderClaim;
  /**
   * For a store whose lanes are kept whole (`DrainedLaneStore`): the notification's job data as the
   * queue keeps it (sealed, or card numbers masked; never card verification data). The store keeps it
   * beside the record until the record is settled, hands the record over to its key's lane in the
   * claim itself (as `lanes.append` would, with `leaseMs` as the runner's lease), answering `appended`,
   * and gives the data back as `carried` to the worker it hands the record to, so neither needs a
   * round trip of its own for it.
   */
  carried?: string;
  /** As `EnqueueClaim.takeOver`: the queued record's job is missing, take it over to queue it again. */
  takeOver?: boolean;
}

/**
 * A worker's claim of the queued record its job names, taken over at once. With `order`, a lane's
 * take runs the lane's first waiting notification, which may be another one than asked for.
 */
export interface TakeClaim extends ClaimBase {
  kind: "take";
  order?: OrderClaim;
  /**
   * The receiver's owner token, from the job: the record may also be taken while still `processing`
   * under it (the receiver put the job in the queue and has not yet marked the record queued, or died
   * first).
   */
  handoffFrom?: string;
  /**
   * A worker whose queue counts its job's runs: this run's number as the queue counts it (its
   * retries so far, plus one). The record keeps it rather than counting one more over the receiver's
   * queued mark, so the record, the job and `ctx.attempt` say the same; never counting back (a job made
   * afresh by a redrive counts on from the record's runs). The built-in stores keep it for an unordered
   * claim, PostgreSQL for every claim; another store may ignore it.
   */
  attempt?: number;
}

/**
 * A notification's event type and subscription as its record keeps them for the console's filters,
 * card-like runs masked (`listedAs` in listed-as.ts): a store indexes them beside the state and the
 * time, so a filtered page reads what it returns, not the store.
 */
export interface ListedAs {
  eventType?: string;
  subscriptionId?: string;
}

/** Where a notification stands among the others of its ordering key (a subscription, by default). */
export interface OrderClaim {
  key: string;
  /** In the form of `sortablePosition`; without one the notification is serialised but never stale. */
  position?: string;
  /**
   * The lane's policy for a dead letter (`ordering.onDeadLetter`), given by a receiver's claim for a
   * queue and kept with the key: `hold` keeps a dead letter at its place in the lane, holding the rest
   * (see `lanes.fail`). Absent: `skip`, the lane goes on without it.
   */
  onDeadLetter?: "hold";
}

/**
 * A claim the caller owns: the record's id, the caller's owner token and, when it was claimed in
 * order, its order key and position. Every later call on the record (complete, fail, extend,
 * markQueued, release) takes the handle whole, so nothing that names the record can be left out.
 */
export interface ClaimHandle {
  id: string;
  owner: string;
  order?: OrderClaim;
}

/** A claim the caller owns: run (claimed) or settle as stale. */
export type ClaimedOrStale = Extract<ClaimResult, { status: "claimed" | "stale" }>;

/** Names a record for `get`: its id, and the order key it was claimed under, if any. */
export type RecordRef = string | { id: string; order?: { key: string } | undefined };

export type ClaimResult =
  /**
   * The caller owns the record now and must run the handler, then complete or fail it. With `order`:
   * it holds its key too, and `previousPosition` is the key's newest completed position, if any.
   */
  | (ClaimHandle & {
      status: "claimed";
      attempt: number;
      previousPosition?: string;
      /** Asked by `append` with `carried`: the record is in its key's lane already, queued; `wake` as `lanes.append`'s. */
      appended?: { wake: boolean };
      /** A waiting notification handed over by `takeNext` or a `take`: the job data its receiver kept with it. */
      carried?: string;
      /** Asked by `enqueue` with `queueAtClaim`: the record is queued already, under the claim's hand-off lease. */
      queued?: true;
      /** Asked by an unordered `run` with `carried`: the data is kept with the record already, as `kept.keep` keeps it. */
      kept?: true;
    })
  /**
   * With `order`: the position is older than `newestPosition`, the key's newest completed one. The
   * caller owns the record (not the key) and must not run the event's handler; it completes the record
   * (or fails it, to be retried) like a claimed one.
   */
  | (ClaimHandle & { status: "stale"; attempt: number; newestPosition: string; carried?: string })
  /**
   * Another owner holds a live lease: on this id, or (`key: true`) on another notification of its key
   * (or, for a `take`, an older notification of the key is still being handed to the queue). With
   * `full: true`, an `append` met its key's lane at its maximum length: not accepted.
   */
  | { status: "processing"; retryAfterMs: number; key?: true; full?: true }
  /**
   * Accepted into a durable queue earlier; a worker will run it. `inLane`: it waits in its key's
   * lane, which has a runner now; it has no job of its own to look for, and nothing is queued again.
   */
  | { status: "queued"; inLane?: true }
  /** Done before; `answer` is what was answered then. */
  | { status: "completed"; answer: StoredAnswer }
  /** The id completed with a different payload fingerprint. */
  | { status: "conflict" };
