import { coded, MerchantWebhooksError } from "../shared/errors.js";
/** A value or a promise of it: the memory store answers synchronously, the Redis store does not. */
export type Awaitable<T> = T | Promise<T>;

/** The answer a completed record keeps, for inspection (`get`); claims never need it back. */
export interface StoredAnswer {
  processed: boolean;
  message: string;
}

export type RecordState = "processing" | "queued" | "completed" | "failed";

/** One notification id's record, as a store keeps it. */
export interface IdempotencyRecord {
  state: RecordState;
  /** Fingerprint of the payload last claimed under this id; a different payload under a completed record is a conflict. */
  fingerprint: string;
  /** Token of the process that holds the claim (processing) or last held it. */
  owner?: string;
  /** Epoch ms until which the owner's claim is live (processing; or queued at claim: its hand-off lease). */
  leaseUntil?: number;
  /** How many times the handler has been started for this id. */
  attempts: number;
  /** The answer sent when the notification completed. */
  answer?: StoredAnswer;
  /** Why the last attempt failed (never the handler's error message: it may hold payload data). */
  error?: string;
}

export interface ClaimRequest {
  id: string;
  fingerprint: string;
  /** A token unique to this attempt; complete/fail/extend succeed only when it still owns the record. */
  owner: string;
  leaseMs: number;
  /** Workers take over `queued` records; receivers answer them as already accepted. */
  takeQueued?: boolean;
  /** Claim in order: one live claim per key at a time, and nothing older than the key's newest completion. */
  order?: OrderClaim;
  /**
   * A worker (`takeQueued`) may also take over a record still `processing` under this owner token: the
   * receiver that put the job in the queue and has not yet marked the record queued, or died first.
   */
  handoffFrom?: string;
  /**
   * A receiver's claim made to hand the notification to a durable queue. With `order`, the record
   * joins its key's waiting list in position order instead of holding the key: it never waits for
   * another notification of its key (only staleness is checked), and workers run the list in order.
   * Joining the list is no run: the record's `attempts` stay as they were, and each worker's take of
   * it counts one, so the record, the job and `ctx.attempt` say the same.
   */
  forQueue?: boolean;
  /**
   * With `forQueue` and no `order`: write the record queued at once, keeping this claim's owner and
   * lease as its hand-off lease, and answer `claimed` with `queued: true`, so no `markQueued` follows
   * the job's add. Until that lease lapses, a receiver's take-over of the record (`takeQueued` with
   * `forQueue`, made when the job is missing) is answered `processing`: the job may be on its way.
   * Workers take it as any queued record. A store may ignore it (then `markQueued` follows).
   */
  queueAtClaim?: boolean;
  /**
   * With `forQueue` and `order`, for a store with `markWaiting`: the notification's job data as the
   * queue keeps it (sealed, or card numbers masked; never card verification data). The store keeps it
   * beside the record until the record is settled, hands the record over to its key's mailbox in the
   * claim itself (as `markWaiting` would, with `leaseMs` as the runner's lease), answering `appended`,
   * and gives the data back as `carried` to the worker it hands the record to, so neither needs a
   * round trip of its own for it.
   */
  carried?: string;
  /**
   * The time limit the claimed run's handler gets (0 or absent: none). A store that holds a transaction
   * open for the run (`claimInTransaction`) bounds that transaction on the server by about this much,
   * so a frozen or partitioned holder cannot keep the id, or a timed-out statement run on, for ever.
   */
  handlerTimeoutMs?: number;
  /**
   * A worker whose queue counts its job's runs: this run's number as the queue counts it (its
   * retries so far, plus one). The record keeps it rather than counting one more over the receiver's
   * queued mark, so the record, the job and `ctx.attempt` say the same; never counting back (a job made
   * afresh by a redrive counts on from the record's runs). The built-in stores keep it for an unordered
   * claim, PostgreSQL for every claim; another store may ignore it.
   */
  attempt?: number;
  /**
   * What the console lists and filters the record by (see `ListedAs`). Written with the record and
   * kept across its later writes; a claim without it leaves the record's as it was.
   */
  listedAs?: ListedAs;
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
 * A lane the store found stalled (`IdempotencyStore.stalledLanes`): notifications wait in it and no
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

/** What the queue's sweep asks `IdempotencyStore.stalledLanes` for. */
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

/** A lane woken by the sweep (`IdempotencyStore.wakeLane`): its head, and the job data kept with it. */
export interface WokenLane {
  id: string;
  /** The job data its receiver kept with it in the lane; absent when it was appended without. */
  carried?: string;
}

/** Where a notification stands among the others of its ordering key (a subscription, by default). */
export interface OrderClaim {
  key: string;
  /** In the form of `sortablePosition`; without one the notification is serialised but never stale. */
  position?: string;
  /**
   * The lane's policy for a dead letter (`ordering.onDeadLetter`), given by a receiver's claim for a
   * queue and kept with the key: `hold` keeps a dead letter at its place in the lane, holding the rest
   * (see `IdempotencyStore.failInLane`). Absent: `skip`, the lane goes on without it.
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
      /** Asked with `carried`: the record is in its key's mailbox already, queued; `wake` as `markWaiting`'s. */
      appended?: { wake: boolean };
      /** A waiter handed over by `takeNext` or a worker's claim: the job data its receiver kept with it. */
      carried?: string;
      /** Asked with `queueAtClaim`: the record is queued already, under the claim's hand-off lease. */
      queued?: true;
    })
  /**
   * With `order`: the position is older than `newestPosition`, the key's newest completed one. The
   * caller owns the record (not the key) and must not run the event's handler; it completes the record
   * (or fails it, to be retried) like a claimed one.
   */
  | (ClaimHandle & { status: "stale"; attempt: number; newestPosition: string; carried?: string })
  /**
   * Another owner holds a live lease: on this id, or (`key: true`) on another notification of its key
   * (or, for a worker, an older notification of the key is still being handed to the queue). With
   * `full: true`, a claim `forQueue` met its key's waiting list at its maximum length: not accepted.
   */
  | { status: "processing"; retryAfterMs: number; key?: true; full?: true }
  /**
   * Accepted into a durable queue earlier; a worker will run it. `inLane`: it waits in its key's
   * mailbox, which has a runner now; it has no job of its own to look for, and nothing is queued again.
   */
  | { status: "queued"; inLane?: true }
  /** Done before; `answer` is what was answered then. */
  | { status: "completed"; answer: StoredAnswer }
  /** The id completed with a different payload fingerprint. */
  | { status: "conflict" };

/**
 * Exactly-once bookkeeping per notification id. Every method that changes a record takes the owner
 * token of the claim, so a process that lost its lease (crash, pause, timeout) cannot overwrite the
 * outcome of the process that took over.
 *
 * A store that cannot reach its backend must throw (or reject): the receiver then answers 503 and the
 * sender keeps the notification. It must never report `claimed` without having recorded the claim.
 *
 * A record claimed with `order` is named by its id and its order key together: every later call on it
 * takes the claim's handle, which carries both (a store may keep such records apart from unordered
 * ones, as Redis does to put a key's records in one hash slot). Releasing the record in any way
 * (complete, fail, markQueued, release) releases the key; `complete` also moves the key's position
 * forward, never back.
 */
/** The longest an order key's waiting list (its mailbox) grows by default before a claim `forQueue` is refused. */
export const DEFAULT_MAILBOX_MAX_LENGTH = 10_000;

/** What `markWaiting` answers: whether the record was handed over, and whether a drain job must be queued. */
export interface MailboxAppend {
  queued: boolean;
  wake: boolean;
}

export interface IdempotencyStore {
  /** The lease this store was configured with; receivers and workers use it unless given their own. */
  readonly leaseMs?: number;
  claim(request: ClaimRequest): Awaitable<ClaimResult>;
  /** Push the lease forward while a long handler runs; false when the claim (or its key) was lost. */
  extend(claim: ClaimHandle, leaseMs?: number): Awaitable<boolean>;
  complete(claim: ClaimHandle, answer: StoredAnswer): Awaitable<boolean>;
  fail(claim: ClaimHandle, error: string): Awaitable<boolean>;
  /** Hand a claimed record over to a queue; the owner token is kept for `release`. */
  markQueued(claim: ClaimHandle): Awaitable<boolean>;
  /**
   * Hand a claim made `forQueue` in order over to the queue as `markQueued` does, as one notification
   * of its key's mailbox, with no job of its own, and answer in the same atomic step whether the key
   * has a runner (a worker running its waiting list, or a drain job on its way). Without one the
   * answer is `wake: true` and the key counts as having one for `leaseMs`: the caller queues the drain
   * job. A runner that finds the list empty stops in one step with clearing that mark, so no append
   * is left without a runner. A store without it gets one job per notification.
   */
  markWaiting?(claim: ClaimHandle, leaseMs: number): Awaitable<MailboxAppend>;
  /**
   * A run of an ordered lane (a claim made in order by a worker) that failed with attempts left: the
   * record goes back, queued, into its key's waiting list at its position, with its attempts, its error
   * and the job data kept with it, to be retried no sooner than `delayMs` from now. Until then nothing
   * behind it in the list is handed out (`takeNext` answers none, a worker's claim `processing` with the
   * time left), so the lane keeps position order through a retry. False when the claim is no longer
   * the caller's. A store without it fails the record, and the lane goes on without it.
   */
  retryInLane?(claim: ClaimHandle, error: string, delayMs: number): Awaitable<boolean>;
  /**
   * A run of an ordered lane that failed its last attempt (a dead letter): failed, as `fail` does. On a
   * lane whose policy is `hold` (`OrderClaim.onDeadLetter`, kept from the receivers' claims) the record
   * also stays at its place in the key's waiting list, and nothing behind it is handed out (`takeNext`
   * answers none, a worker's claim `processing`) until it is run again (a worker's claim of it, from its
   * redriven job, takes it first) or settled by a person (completed: discarded). Answers `held` when it
   * holds the lane, else as `fail`. A store without it fails the record, and the lane goes on.
   */
  failInLane?(claim: ClaimHandle, error: string): Awaitable<boolean | "held">;
  /** The id of the dead letter holding the order key's lane (see `failInLane`), if one does. */
  heldBy?(order: { key: string }): Awaitable<string | undefined>;
  /** The lanes a dead letter holds now (see `failInLane`): how many, and the one held longest. For `health()`. */
  heldLanes?(): Awaitable<HeldLanes>;
  /**
   * Whether the order key's mailbox is being run now: a worker holds the key under a live lease, or a
   * runner put a failed notification back for its retry (`retryInLane`) and comes back for it. The
   * queue's sweep asks it before taking a waiting notification, which has no job of its own, for one
   * whose job was lost. (A drain job merely on its way is not counted: it may be the job that was lost.)
   */
  laneRunning?(order: { key: string }): Awaitable<boolean>;
  /** Forget a claim that will not be processed (the queue refused it), so a redelivery starts afresh. */
  release(claim: ClaimHandle): Awaitable<boolean>;
  get(record: RecordRef): Awaitable<IdempotencyRecord | undefined>;
  /**
   * With the key free, claim the first notification waiting in the key's list (queued in order) for
   * `owner`, holding the key: the worker that just finished one runs the next at once. Undefined when
   * none waits, the key is held, or the first is still being handed to the queue.
   */
  takeNext?(order: { key: string }, owner: string, leaseMs: number): Awaitable<ClaimedOrStale | undefined>;
  /**
   * `complete` for a claim made in order, and in the same step `takeNext` of its key for `next.owner`:
   * a runner draining a lane hands itself the next waiter with the completion, in one round trip.
   * `next` is undefined when the completion was refused or no waiter could be handed over.
   */
  completeAndTakeNext?(
    claim: ClaimHandle,
    answer: StoredAnswer,
    next: { owner: string; leaseMs: number },
  ): Awaitable<{ completed: boolean; next?: ClaimedOrStale | undefined }>;
  /** Whether the order key's waiting list holds any notification (the sweep drops a lane's copy once it is empty). */
  laneWaiting?(order: { key: string }): Awaitable<boolean>;
  /**
   * The lanes the queue's sweep looks at from the store's side, up to `limit`: lanes with notifications
   * waiting (or a holder that died, put back in line) whose last append was before `before` (epoch
   * ms) and that no worker holds under a live lease, no runner waits to retry, and no dead letter
   * holds. The store keeps an index of lanes with waiters for it, written with each append; a lane
   * found empty leaves it, and a lane looked at is not answered again until `before` passes its look,
   * so successive calls page on.
   */
  stalledLanes?(query: StalledLanesQuery): Awaitable<StalledLane[]>;
  /**
   * Wake a lane `stalledLanes` answered, whose drain job the queue no longer has: unless it was run or
   * woken since (its drain is no longer `lane.drain`), its head becomes the notification whose job runs
   * it, marked as the lane's runner for `leaseMs`. Answers the head and its job data for the sweep to
   * queue that job with; undefined when there is nothing to wake.
   */
  wakeLane?(lane: StalledLane, leaseMs: number): Awaitable<WokenLane | undefined>;
  /**
   * The records, most recently changed first, for the console (`merchant-webhooks/console`): by state,
   * order key and time of last change, a page at a time. Optional: without it the console finds
   * notifications through the queue and the recordings.
   */
  list?(query: ListQuery): Awaitable<ListPage>;
  /** Resolves when the backend answers; throws (or rejects) when it cannot be reached. Used by `receiver.health()`. */
  ping?(): Awaitable<void>;
  close?(): Awaitable<void>;
  /** A store on a network connection says where it connects and whether it is up (see `StoreConnection`). */
  readonly connection?: StoreConnection;
}

/** The state of a store's connection: `up` once ready, `down` from an error or close until ready again. */
export interface StoreConnectionState {
  state: "connecting" | "up" | "down" | "closed";
  /** Epoch ms of the change into this state. */
  since: number;
  /** The last error's message while down (never a password: connection errors name host and port). */
  error?: string;
}

/** Logger methods a connection writes its state changes with (a pino logger fits). */
export interface ConnectionLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** What a store tells about its connection, for logs, `health()` and the start-up warning. */
export interface StoreConnection {
  /** `host:port`, or the cluster's nodes; never the password. */
  readonly address: string;
  state(): StoreConnectionState;
  /** Log each state change from now on (connect, ready, error, reconnecting, end), once per change. */
  watch(logger: ConnectionLogger): () => void;
  /** The first state past connecting: up, or down (unreachable at start). */
  settled(): Promise<"up" | "down" | "closed">;
}

/** Thrown (or rejected with) by stores whose backend cannot be reached: the receiver answers 503. */
export class StoreUnavailableError extends MerchantWebhooksError {
  override name = "StoreUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("MW_STORE_UNAVAILABLE", message, { ...options, status: 503 });
  }
}

export const DEFAULT_LEASE_MS = 30_000;

/** The id and order key (if any) a `RecordRef` names. */
export function refOf(record: RecordRef): { id: string; key: string | undefined } {
  return typeof record === "string" ? { id: record, key: undefined } : { id: record.id, key: record.order?.key };
}
export const DEFAULT_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/** What `IdempotencyStore.list` is asked for. Times are epoch ms of the record's last change. */
export interface ListQuery {
  /** Only the record of this notification id (with its order key and time, which `get` does not give). */
  id?: string;
  state?: RecordState;
  /** Only records claimed in order under this key (a subscription, by default). */
  orderKey?: string;
  /** Only records whose claim told this event type (`ClaimRequest.listedAs`). */
  eventType?: string;
  /** Only records whose claim told this subscription id (`ClaimRequest.listedAs`). */
  subscriptionId?: string;
  /** Changed at or after this time. */
  since?: number;
  /** Changed at or before this time. */
  until?: number;
  /** From the page before's `cursor`. */
  cursor?: string;
  /** Records per page. Default 50, at most 1,000. */
  limit?: number;
}

/** One record as `list` gives it: the record, its id, its order key and position, and when it last changed. */
export interface ListedRecord extends IdempotencyRecord, ListedAs {
  id: string;
  updatedAt: number;
  order?: OrderClaim;
}

export interface ListPage {
  items: ListedRecord[];
  /** There may be more: pass it back for the next page. */
  cursor?: string;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1_000;

/**
 * Pages are newest first, ordered by (updatedAt, id) descending; a cursor is the last item's pair, so a
 * record changed while paging moves to the front and is not seen twice on later pages.
 */
export const listCursor = {
  of: (item: { updatedAt: number; id: string }): string =>
    Buffer.from(JSON.stringify([item.updatedAt, item.id])).toString("base64url"),
  parse(cursor: string | undefined): { updatedAt: number; id: string } | undefined {
    if (cursor === undefined || cursor === "") return undefined;
    try {
      const [updatedAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
      if (typeof updatedAt === "number" && typeof id === "string") return { updatedAt, id };
    } catch {}
    throw coded(new TypeError("list: cursor is not one a page gave"), "MW_LIST_CURSOR");
  },
  /** Whether `item` comes after the cursor's position (so belongs to the next page). */
  after(item: { updatedAt: number; id: string }, at: { updatedAt: number; id: string } | undefined): boolean {
    return at === undefined || item.updatedAt < at.updatedAt || (item.updatedAt === at.updatedAt && item.id < at.id);
  },
  limitOf(query: ListQuery): number {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
      throw coded(
        new RangeError(`list: limit must be a whole number from 1 to ${MAX_LIST_LIMIT}; got ${limit}`),
        "MW_LIST_LIMIT",
      );
    return limit;
  },
};

/** Whether a listed record passes the query's filters other than the cursor. */
export function matchesListQuery(item: ListedRecord, query: ListQuery): boolean {
  if (query.id !== undefined && item.id !== query.id) return false;
  if (query.state !== undefined && item.state !== query.state) return false;
  if (query.orderKey !== undefined && item.order?.key !== query.orderKey) return false;
  if (query.eventType !== undefined && item.eventType !== query.eventType) return false;
  if (query.subscriptionId !== undefined && item.subscriptionId !== query.subscriptionId) return false;
  if (query.since !== undefined && item.updatedAt < query.since) return false;
  if (query.until !== undefined && item.updatedAt > query.until) return false;
  return true;
}
