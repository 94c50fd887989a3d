import { coded, MerchantWebhooksError } from "../shared/errors.js";
import type {
  Awaitable,
  ClaimHandle,
  ClaimRequest,
  ClaimResult,
  ListedAs,
  OrderClaim,
  RecordRef,
  StoredAnswer,
} from "./claim.js";
import type { KeptNotifications } from "./kept-notifications.js";
import type { DrainedLaneStore, LaneStore } from "./lane-store.js";

// The claim's types and the lanes' have modules of their own; the store's interface is reached from here.
export type * from "./claim.js";
export type * from "./kept-notifications.js";
export * from "./lane-store.js";

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
  /** Forget a claim that will not be processed (the queue refused it), so a redelivery starts afresh. */
  release(claim: ClaimHandle): Awaitable<boolean>;
  get(record: RecordRef): Awaitable<IdempotencyRecord | undefined>;
  /**
   * The store's ordered lanes (see lane-store.ts and docs/stores.md): a `LaneStore`, or a
   * `DrainedLaneStore` that keeps each lane whole. Absent: ordered claims still run in order, one job
   * per notification.
   */
  readonly lanes?: LaneStore | DrainedLaneStore;
  /**
   * Keeping an in-process queue's accepted notifications with their records, so a receiver on the
   * same store runs them if the one that accepted them dies (see kept-notifications.ts). Absent (as
   * in `memoryStore`, whose records die with the process anyway): they live in memory alone.
   */
  readonly kept?: KeptNotifications;
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
