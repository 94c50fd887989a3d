import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { type ClaimFlags, claimFlags } from "./claim-flags.js";
import { appendedFor } from "./lane-queue.js";
import { type LaneMaxLengthOption, laneMaxLengthOf } from "./lane-store.js";
import { listedAsOf } from "./listed-as.js";
import { memoryOrders } from "./memory-orders.js";
import { isBefore } from "./position.js";
import {
  type ClaimedOrStale,
  type ClaimHandle,
  type ClaimRequest,
  type ClaimResult,
  DEFAULT_LEASE_MS,
  DEFAULT_RETENTION_SECONDS,
  type DrainedLaneStore,
  type HeldLanes,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListedAs,
  type ListedRecord,
  type ListPage,
  type ListQuery,
  listCursor,
  matchesListQuery,
  type OrderClaim,
  refOf,
  type StalledLane,
  type StoredAnswer,
  StoreUnavailableError,
} from "./store.js";
import { WriteOrder, type Written } from "./write-order.js";

const MEMORY_STORE_KEYS = {
  retentionSeconds: true,
  maxEntries: true,
  maxBytes: true,
  laneMaxLength: true,
  now: true,
} as const satisfies KnownKeys<MemoryStoreOptions>;

export interface MemoryStoreOptions extends LaneMaxLengthOption {
  /** How long a record is kept after its last change. Default 7 days. */
  retentionSeconds?: number;
  /**
   * Most records kept; the least recently changed settled records are dropped first, so memory stays
   * bounded. A dropped completed record means a very late duplicate runs again. Default 100,000.
   */
  maxEntries?: number;
  /**
   * Most bytes the records may take (ids, fingerprints, owners and answers, counted at two bytes a
   * character, plus a fixed overhead per record). Default 64 MiB. With `ordering`, the subscriptions'
   * positions are held to the same figure, counted apart (`orderBytes`), and to `maxEntries`.
   */
  maxBytes?: number;
  /** Clock in epoch ms; tests move it to expire leases. */
  now?: () => number;
}

/**
 * A record as the store keeps it. A field that no longer applies is set to undefined, never deleted:
 * V8 turns an object that loses a field into a dictionary, bigger and slower to read, and a store
 * holds one per notification.
 */
interface Entry extends IdempotencyRecord, Written {
  /** Claimed in order: its key and position, and whether this claim holds the key (a stale one does not). */
  order?: OrderClaim & { holdsKey: boolean };
  /** In its key's lane (handed to a queue in order, not yet run). */
  waiting?: boolean;
  /** The job data its receiver kept with it in the lane (`AppendClaim.carried`), until it is settled. */
  carried?: string;
  /** What its first claim that told it said of the notification, for `list`'s filters. */
  listedAs?: ListedAs;
  /** Put back in line after a failed run (`lanes.retry`): not handed out before this epoch ms. */
  retryAt?: number | undefined;
  expiresAt: number;
  /** Estimated bytes this record holds, counted in the store's total. */
  bytes: number;
}

/** The memory store: the store's interface, its lanes kept whole, and its sizes. */
export type MemoryStore = IdempotencyStore & {
  readonly lanes: DrainedLaneStore;
  readonly size: number;
  readonly bytes: number;
  readonly orderKeys: number;
  readonly orderBytes: number;
};

export const DEFAULT_MAX_ENTRIES = 100_000;
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** What a record costs beyond its strings: the Map slot, the entry object and its fields. */
const ENTRY_OVERHEAD_BYTES = 200;

/**
 * The run a claim starts: one more than the record counted, or, for an unordered claim with a
 * worker's queue count (`TakeClaim.attempt`), that count, never counting back. A queued record (or
 * the receiver's claim a worker was handed) counts the run it waits for already. In order, the lane
 * keeps its own count; a receiver's append to its lane (`appends`) starts no run and counts none.
 */
function countedAttempts(
  request: ClaimFlags,
  entry: { state: string; attempts: number } | undefined,
  handedOver: boolean | undefined,
  appends: boolean,
): number {
  const attempts = (entry?.attempts ?? 0) + (appends ? 0 : 1);
  if (request.attempt === undefined || request.order) return attempts;
  const counted = entry?.state === "queued" || handedOver ? attempts - 1 : attempts;
  return Math.max(request.attempt, counted);
}

/**
 * The embedded default store: one process, no persistence. It gives exactly-once per id within the
 * process (concurrent duplicates, retries after failure); across processes or restarts use `redisStore`.
 *
 * Records are kept in a `Map` and lined up by their last write (`WriteOrder`), so expiry and the caps
 * both trim from the least recently written, in constant time per record.
 * A live claim (processing under its lease, or queued) is never evicted: dropping it would let a
 * redelivery run the handler a second time. It goes back to the tail instead; when nothing but live
 * claims is left to drop, the new claim is refused as unavailable (503: the sender keeps it).
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  rejectUnknownKeys("memoryStore", options, Object.keys(MEMORY_STORE_KEYS));
  const retentionMs = (options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS) * 1000;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const laneMaxLength = laneMaxLengthOf(options);
  const now = options.now ?? Date.now;
  const records = new Map<string, Entry>();
  const writeOrder = new WriteOrder<Entry>();
  const orders = memoryOrders({ retentionMs, maxEntries, maxBytes, now });
  let totalBytes = 0;

  const full = () => records.size > maxEntries || totalBytes > maxBytes;

  function put(id: string, entry: Entry): void {
    const old = records.get(id);
    if (old) {
      totalBytes -= old.bytes;
      writeOrder.dropped(old);
      // Kept across every later write of the id, as the other stores keep it with the record.
      if (old.listedAs) entry.listedAs = old.listedAs;
    }
    entry.bytes = sizeOf(id, entry);
    if (old !== entry) records.set(id, entry);
    totalBytes += entry.bytes;
    writeOrder.wrote(id, entry, records.size);
  }

  function remove(id: string): void {
    const entry = records.get(id);
    if (!entry) return;
    records.delete(id);
    totalBytes -= entry.bytes;
    writeOrder.dropped(entry);
  }

  function write(id: string, entry: Entry): void {
    put(id, entry);
    trim(now());
  }

  let writes = 0;
  /**
   * Evict past the caps on every write; sweep expired records every 1,024 writes (reads check expiry
   * anyway). Returns false when the caps still do not hold because only live claims are left.
   */
  function trim(at: number): boolean {
    if (!full() && (++writes & 1023) !== 0) return true;
    let budget = records.size;
    for (let entry = writeOrder.oldest(); entry && budget-- > 0; entry = writeOrder.oldest()) {
      const id = writeOrder.oldestKey;
      if (entry.expiresAt <= at) remove(id);
      else if (!full()) break;
      // Keep it, behind the records that can go.
      else if (isLiveClaim(entry, at)) put(id, entry);
      else remove(id);
    }
    return !full();
  }

  function live(id: string): Entry | undefined {
    const entry = records.get(id);
    if (entry && entry.expiresAt <= now()) {
      remove(id);
      return undefined;
    }
    return entry;
  }

  /** Apply `change` only when `owner` still holds the record in one of `states`. */
  function ownedUpdate({ id, owner }: ClaimHandle, states: readonly string[], change: (entry: Entry) => void): boolean {
    const entry = live(id);
    if (!entry || entry.owner !== owner || !states.includes(entry.state)) return false;
    change(entry);
    entry.expiresAt = now() + retentionMs;
    write(id, entry);
    return true;
  }

  /** The claim on the record ends: its key (if it held it) is free for the next notification. */
  function letGoOfKey(entry: Entry, id: string, stillWaiting = false): void {
    if (entry.waiting && !stillWaiting) {
      orders.leave(entry.order!.key, id);
      entry.waiting = false;
    }
    if (!entry.order?.holdsKey) return;
    orders.letGo(entry.order.key, entry.owner!);
    entry.order.holdsKey = false;
  }

  /**
   * The first of the key's lane that can run now (`ownId`, the caller's own, counts as ready),
   * dropping ids that no longer wait; "busy" when the first is a receiver's claim still being handed
   * to the queue; "held" when it is a dead letter holding its lane (see `lanes.fail`).
   */
  function firstInLane(
    key: string,
    ownId: string | undefined,
    at: number,
  ): string | "busy" | "held" | { later: number } | undefined {
    for (const id of orders.waiters(key)) {
      const entry = live(id);
      if (id === ownId || (entry?.waiting && entry.state === "queued")) {
        // A failed run put back for its retry: the lane waits for it, in position order.
        if (entry?.state === "queued" && (entry.retryAt ?? 0) > at) return { later: entry.retryAt! - at };
        return id;
      }
      if (entry?.waiting && entry.state === "processing" && entry.leaseUntil! > at) return "busy";
      if (entry?.waiting && entry.state === "failed") return "held";
      orders.leave(key, id);
    }
    return undefined;
  }

  /**
   * For the sweep: the head of a lane nothing runs (no live holder, no retry awaited, not held by a dead
   * letter, its head not still being handed over), `running` when something does or will, undefined
   * when nothing waits. A holder that died is put back in line first, as a worker's claim would.
   */
  function laneHead(key: string, at: number): string | "running" | undefined {
    if (orders.beingRun(key)) return "running";
    returnLapsedHolder(key, undefined, at);
    const first = firstInLane(key, undefined, at);
    return typeof first === "object" || first === "busy" || first === "held" ? "running" : first;
  }

  /** The dead letter holding the key's lane (see `lanes.fail`), if one does. */
  function heldBy(key: string): string | undefined {
    return orders.waiters(key).find((id) => {
      const entry = live(id);
      return entry?.waiting === true && entry.state === "failed";
    });
  }

  /** Claim the waiting notification `id` of `key` for `owner`, holding the key unless it turned stale. */
  function runFromLane(id: string, key: string, owner: string, leaseMs: number, at: number): ClaimedOrStale {
    const entry = live(id)!;
    orders.leave(key, id);
    orders.runner(key, at + leaseMs);
    const position = entry.order?.position;
    const newest = orders.position(key);
    const stale = position !== undefined && newest !== undefined && isBefore(position, newest);
    const claimed: Entry = {
      ...entry,
      state: "processing",
      owner,
      leaseUntil: at + leaseMs,
      attempts: entry.attempts + 1,
      waiting: false,
      retryAt: undefined,
      order: { key, ...(position !== undefined ? { position } : {}), holdsKey: !stale },
      expiresAt: at + retentionMs,
    };
    put(id, claimed);
    const handle: ClaimHandle = { id, owner, order: position !== undefined ? { key, position } : { key } };
    const carried = entry.carried === undefined ? {} : { carried: entry.carried };
    if (stale) return { status: "stale", ...handle, attempt: claimed.attempts, newestPosition: newest!, ...carried };
    orders.hold(key, owner, at + leaseMs, id);
    return newest === undefined
      ? { status: "claimed", ...handle, attempt: claimed.attempts, ...carried }
      : { status: "claimed", ...handle, attempt: claimed.attempts, previousPosition: newest, ...carried };
  }

  /**
   * A worker that held the key and died (or lost its lease) left its notification run halfway: it goes
   * back into the key's lane at its position, so it runs before any newer one, not after as stale.
   */
  function returnLapsedHolder(key: string, ownId: string | undefined, at: number): void {
    const lapsed = orders.lapsedHolder(key);
    if (!lapsed || lapsed.id === ownId) return;
    const entry = live(lapsed.id);
    if (
      entry?.state !== "processing" ||
      !entry.order?.holdsKey ||
      entry.owner !== lapsed.owner ||
      entry.leaseUntil! > at
    )
      return;
    put(lapsed.id, {
      ...entry,
      state: "queued",
      leaseUntil: undefined,
      waiting: true,
      order: { ...entry.order, holdsKey: false },
    });
    orders.wait(key, lapsed.id, entry.order.position);
  }

  // The lanes, kept whole here: one drain job runs each (see lane-store.ts).
  const lanes: DrainedLaneStore = {
    fail(claim, error) {
      const key = claim.order?.key;
      let held = false;
      const failed = ownedUpdate(claim, ["processing"], (entry) => {
        entry.state = "failed";
        entry.error = error;
        entry.leaseUntil = undefined;
        entry.carried = undefined;
        letGoOfKey(entry, claim.id);
        // Back at its place at the head of its lane, which waits for it (see `firstInLane`).
        if (key !== undefined && orders.holds(key)) {
          entry.waiting = true;
          orders.wait(key, claim.id, entry.order?.position);
          held = true;
        }
      });
      return failed && held ? "held" : failed;
    },

    heldBy: (order) => heldBy(order.key),

    heldLanes() {
      const held: HeldLanes = { count: 0 };
      for (const key of orders.waitingKeys()) {
        const id = heldBy(key);
        if (id === undefined) continue;
        held.count++;
        // Its last change is its failure: held since then.
        const since = live(id)!.expiresAt - retentionMs;
        if (held.oldest === undefined || since < held.oldest.since) held.oldest = { key, id, since };
      }
      return held;
    },

    // Held by a dead letter, the lane waits for a person: nothing to queue for it meanwhile.
    running: (order) => orders.beingRun(order.key) || heldBy(order.key) !== undefined,

    waiting: (order) => orders.waiters(order.key).length > 0,

    stalled({ before, limit, queue, wokenBefore = before }) {
      const at = now();
      const stalled: StalledLane[] = [];
      let looked = 0;
      for (const [key, lane] of orders.lanes()) {
        // Woken by a receiver whose add of the drain job may still be on its way: not stalled yet.
        if (lane.seen >= before || (orders.wokenAt(key) ?? -Infinity) >= wokenBefore) continue;
        if (looked++ >= limit) break;
        const first = laneHead(key, at);
        if (first === undefined) {
          orders.lanes().delete(key);
          continue;
        }
        const carried = first === "running" ? undefined : live(first)?.carried;
        if (!appendedFor(carried, queue)) continue;
        lane.seen = at;
        if (first === "running") continue;
        stalled.push({ key, head: first, ...(lane.drain ? { drain: lane.drain } : {}) });
      }
      return stalled;
    },

    wake(stalled, leaseMs) {
      const at = now();
      const lane = orders.lanes().get(stalled.key);
      if (!lane || lane.drain !== stalled.drain) return undefined;
      const first = laneHead(stalled.key, at);
      if (first === undefined || first === "running") return undefined;
      orders.runner(stalled.key, at + leaseMs);
      lane.drain = first;
      lane.seen = at;
      const carried = live(first)?.carried;
      return carried === undefined ? { id: first } : { id: first, carried };
    },

    retry(claim, error, delayMs) {
      const key = claim.order?.key;
      if (key === undefined) return false;
      const at = now();
      return ownedUpdate(claim, ["processing"], (entry) => {
        letGoOfKey(entry, claim.id);
        entry.state = "queued";
        entry.error = error;
        entry.leaseUntil = undefined;
        entry.retryAt = at + delayMs;
        entry.waiting = true;
        orders.wait(key, claim.id, entry.order?.position);
        // The key keeps its runner past the retry: appends meanwhile wake none (see ORDERED_RETRY).
        orders.runner(key, at + delayMs + DEFAULT_LEASE_MS);
        orders.retryUntil(key, at + delayMs + DEFAULT_LEASE_MS);
      });
    },

    append(claim, leaseMs) {
      const queued = ownedUpdate(claim, ["processing"], (entry) => {
        entry.state = "queued";
        entry.leaseUntil = undefined;
        letGoOfKey(entry, claim.id, true);
      });
      return { queued, wake: queued && orders.wakeRunner(claim.order!.key, now() + leaseMs, claim.owner, claim.id) };
    },

    takeNext(order, owner, leaseMs) {
      const at = now();
      if (orders.heldFor(order.key, owner) !== undefined) return undefined;
      returnLapsedHolder(order.key, undefined, at);
      const first = firstInLane(order.key, undefined, at);
      // The head waits for its retry: the runner that put it back comes again then (see `lanes.retry`).
      if (typeof first === "object") return undefined;
      if (first !== undefined && first !== "busy" && first !== "held")
        return runFromLane(first, order.key, owner, leaseMs, at);
      // The runner stops here, in the step that found the list empty: an append from now on wakes another.
      orders.runner(order.key, undefined);
      return undefined;
    },

    // In this process's memory both steps are one: nothing runs between them.
    completeAndTakeNext(claim, answer, next) {
      const completed = store.complete(claim, answer) as boolean;
      if (!completed || claim.order === undefined) return { completed };
      return { completed, next: lanes.takeNext(claim.order, next.owner, next.leaseMs) as ClaimedOrStale | undefined };
    },
  };

  const store: MemoryStore = {
    get size() {
      return records.size;
    },
    get bytes() {
      return totalBytes;
    },
    /** Order keys kept for `ordering` (a subscription's position and the claim holding it). */
    get orderKeys() {
      return orders.size;
    },
    /** Estimated bytes the order keys hold: bounded by `maxBytes` too, counted apart from the records'. */
    get orderBytes() {
      return orders.bytes;
    },

    claim(asked: ClaimRequest): ClaimResult {
      // Decided on the flags Redis's scripts and PostgreSQL's SQL take, so the three stores decide alike.
      const request = claimFlags(asked);
      const { id, fingerprint, owner, leaseMs, takeQueued, order, handoffFrom, forQueue } = request;
      const at = now();
      const entry = live(id);
      const handedOver = takeQueued && handoffFrom !== undefined && entry?.owner === handoffFrom;
      // Whether the record can be taken over is decided first; the payload is compared only against a
      // completed record, the one case where a different payload under the id is a sender's error.
      if (entry?.state === "completed") {
        return entry.fingerprint === fingerprint
          ? { status: "completed", answer: entry.answer! }
          : { status: "conflict" };
      }
      if (entry?.state === "processing" && entry.leaseUntil! > at && !handedOver) {
        return { status: "processing", retryAfterMs: entry.leaseUntil! - at };
      }
      if (entry?.state === "queued" && !takeQueued) {
        // Another payload under a queued id waits for the queued one's outcome instead of being acknowledged.
        if (entry.fingerprint !== fingerprint) return { status: "processing", retryAfterMs: leaseMs };
        // Waiting in its lane, which has a runner: a duplicate, no new claim (see ORDERED_CLAIM).
        if (entry.waiting && entry.order && orders.hasRunner(entry.order.key))
          return { status: "queued", inLane: true };
        return { status: "queued" };
      }
      // A receiver taking over a queued record whose job is missing: while the hand-off lease of the
      // receiver that queued it at claim is live, its job may still be on its way.
      const toQueue = forQueue && request.queueAtClaim && !order;
      if (entry?.state === "queued" && toQueue && entry.leaseUntil !== undefined && entry.leaseUntil > at) {
        return { status: "processing", retryAfterMs: entry.leaseUntil - at };
      }
      // In order: older than the key's newest completion is stale; otherwise wait for the key's holder.
      const newestPosition = order && orders.position(order.key);
      const stale =
        order?.position !== undefined && newestPosition !== undefined && isBefore(order.position, newestPosition);
      // Handed to a queue, it never waits for the key: it joins the key's lane instead.
      if (order && !stale && !forQueue) {
        const heldFor = orders.heldFor(order.key, owner);
        if (heldFor !== undefined)
          return {
            status: "processing",
            retryAfterMs: takeQueued ? heldFor : orders.expectedWait(order.key, heldFor),
            key: true,
          };
      }
      if (order && takeQueued && !stale && !forQueue) {
        // A worker: its own record waits in the key's list, and the list's first waiting notification runs.
        returnLapsedHolder(order.key, id, at);
        orders.wait(order.key, id, order.position);
        const first = firstInLane(order.key, id, at);
        if (first === "busy") return { status: "processing", retryAfterMs: 50, key: true };
        // Held by a dead letter: its redrive or discard lets the lane on; this job looks again a lease later.
        if (first === "held") return { status: "processing", retryAfterMs: leaseMs, key: true };
        if (typeof first === "object") return { status: "processing", retryAfterMs: first.later, key: true };
        if (first !== undefined && first !== id) {
          put(id, {
            state: "queued",
            fingerprint,
            owner: entry?.owner ?? owner,
            attempts: entry?.attempts ?? 0,
            order: { ...order, holdsKey: false },
            waiting: true,
            expiresAt: at + retentionMs,
            bytes: 0,
            written: 0,
          });
          return runFromLane(first, order.key, owner, leaseMs, at);
        }
      }
      if (order && entry?.waiting && !forQueue) orders.leave(order.key, id);
      if (order && forQueue && !stale && !entry?.waiting && orders.waiters(order.key).length >= laneMaxLength)
        return { status: "processing", retryAfterMs: leaseMs, key: true, full: true };
      const attempts = countedAttempts(request, entry, handedOver, !!order && !!forQueue && !stale);
      const claimed: Entry = {
        state: "processing",
        fingerprint,
        owner,
        leaseUntil: at + leaseMs,
        attempts,
        answer: undefined,
        error: undefined,
        order: undefined,
        waiting: false,
        carried: undefined,
        retryAt: undefined,
        expiresAt: at + retentionMs,
        bytes: 0,
        written: 0,
      };
      if (order) claimed.order = { ...order, holdsKey: !stale && !forQueue };
      // Kept from the first claim that told it (see listedAsOf).
      const listed = entry?.listedAs ?? listedAsOf(request);
      if (listed) claimed.listedAs = listed;
      // Kept with its data, it is handed over at once, as `lanes.append` would (see `AppendClaim.carried`).
      const carried = order && forQueue && !stale ? request.carried : undefined;
      if (order && forQueue) orders.policy(order.key, order.onDeadLetter === "hold");
      if (order && forQueue && !stale) {
        claimed.waiting = true;
        orders.wait(order.key, id, order.position);
        if (carried !== undefined) {
          claimed.state = "queued";
          claimed.carried = carried;
          claimed.leaseUntil = undefined;
        }
      }
      // Queued at once under its hand-off lease: no `markQueued` follows the job's add.
      if (toQueue) claimed.state = "queued";
      put(id, claimed);
      if (!trim(at)) {
        // Only live claims are left to evict: refuse this one rather than drop someone's claim.
        remove(id);
        if (entry) put(id, entry);
        throw new StoreUnavailableError("memory store is full of claims in progress");
      }
      const handle: ClaimHandle = order ? { id, owner, order } : { id, owner };
      if (stale) return { status: "stale", ...handle, attempt: attempts, newestPosition: newestPosition! };
      if (carried !== undefined) {
        const appended = { wake: orders.wakeRunner(order!.key, at + leaseMs, owner, id) };
        return newestPosition === undefined
          ? { status: "claimed", ...handle, attempt: attempts, appended }
          : { status: "claimed", ...handle, attempt: attempts, previousPosition: newestPosition, appended };
      }
      if (toQueue) return { status: "claimed", ...handle, attempt: attempts, queued: true };
      if (order && !forQueue) orders.hold(order.key, owner, at + leaseMs, takeQueued ? id : undefined);
      // A worker holding the key runs its lane from here.
      if (order && takeQueued && !forQueue) orders.runner(order.key, at + leaseMs);
      return newestPosition === undefined
        ? { status: "claimed", ...handle, attempt: attempts }
        : { status: "claimed", ...handle, attempt: attempts, previousPosition: newestPosition };
    },

    extend(claim, leaseMs = DEFAULT_LEASE_MS) {
      const { id, owner } = claim;
      // An ordered claim's key is part of the claim: lost to another notification, the claim is lost.
      const order = live(id)?.order;
      const key = order?.holdsKey ? order.key : undefined;
      if (key !== undefined && orders.heldFor(key, owner) !== undefined) return false;
      // Unordered, a record queued at claim holds its hand-off lease the same way.
      return ownedUpdate(claim, order ? ["processing"] : ["processing", "queued"], (entry) => {
        entry.leaseUntil = now() + leaseMs;
        if (key !== undefined) orders.hold(key, owner, entry.leaseUntil);
      });
    },

    complete(claim, answer: StoredAnswer) {
      return ownedUpdate(claim, ["processing"], (entry) => {
        entry.state = "completed";
        entry.answer = answer;
        entry.leaseUntil = undefined;
        entry.error = undefined;
        if (entry.order?.position !== undefined) orders.advance(entry.order.key, entry.order.position);
        entry.carried = undefined;
        letGoOfKey(entry, claim.id);
      });
    },

    fail(claim, error) {
      return ownedUpdate(claim, ["processing"], (entry) => {
        entry.state = "failed";
        entry.error = error;
        entry.leaseUntil = undefined;
        entry.carried = undefined;
        letGoOfKey(entry, claim.id);
      });
    },

    markQueued(claim) {
      return ownedUpdate(claim, ["processing"], (entry) => {
        entry.state = "queued";
        entry.leaseUntil = undefined;
        letGoOfKey(entry, claim.id, true);
      });
    },

    release({ id, owner }) {
      const entry = live(id);
      if (!entry || entry.owner !== owner || (entry.state !== "processing" && entry.state !== "queued")) return false;
      // A runner this append woke goes too: its drain job was never queued (see ORDERED_RELEASE).
      if (entry.order) orders.unwake(entry.order.key, owner);
      letGoOfKey(entry, id);
      remove(id);
      return true;
    },

    get(ref) {
      const entry = live(refOf(ref).id);
      return entry && recordOf(entry);
    },

    list: (query) => listRecords(records, retentionMs, now(), query),

    // In this process's memory: reachable whenever the process can answer at all.
    ping() {},
    lanes,
  };
  return store;
}

/**
 * The console's page of records, by a walk of them all, newest first (a record's last change is its
 * expiry less the retention).
 */
function listRecords(records: Map<string, Entry>, retentionMs: number, at: number, query: ListQuery): ListPage {
  const limit = listCursor.limitOf(query);
  const from = listCursor.parse(query.cursor);
  const found: ListedRecord[] = [];
  const only = query.id === undefined ? undefined : records.get(query.id);
  const entries: Iterable<[string, Entry]> = query.id === undefined ? records : only ? [[query.id, only]] : [];
  for (const [id, entry] of entries) {
    if (entry.expiresAt <= at) continue;
    const item: ListedRecord = { ...recordOf(entry), ...entry.listedAs, id, updatedAt: entry.expiresAt - retentionMs };
    const order = entry.order;
    if (order)
      item.order = order.position === undefined ? { key: order.key } : { key: order.key, position: order.position };
    if (matchesListQuery(item, query) && listCursor.after(item, from)) found.push(item);
  }
  // The map's order is the records' first writes, not their last changes: sort.
  found.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const items = found.slice(0, limit);
  return found.length > limit ? { items, cursor: listCursor.of(items[items.length - 1]!) } : { items };
}

/** The record as the store's interface shows it: only the fields it has, none of the store's own. */
function recordOf(entry: Entry): IdempotencyRecord {
  const record: IdempotencyRecord = { state: entry.state, fingerprint: entry.fingerprint, attempts: entry.attempts };
  if (entry.owner !== undefined) record.owner = entry.owner;
  if (entry.leaseUntil !== undefined) record.leaseUntil = entry.leaseUntil;
  if (entry.answer !== undefined) record.answer = entry.answer;
  if (entry.error !== undefined) record.error = entry.error;
  return record;
}

/** A claim someone is acting on: a processing record under its lease, or one handed to a queue. */
function isLiveClaim(entry: Entry, at: number): boolean {
  return entry.state === "queued" || (entry.state === "processing" && entry.leaseUntil! > at);
}

function sizeOf(id: string, entry: Entry): number {
  const chars =
    id.length +
    entry.fingerprint.length +
    (entry.owner?.length ?? 0) +
    (entry.answer?.message.length ?? 0) +
    (entry.error?.length ?? 0) +
    (entry.carried?.length ?? 0) +
    (entry.listedAs?.eventType?.length ?? 0) +
    (entry.listedAs?.subscriptionId?.length ?? 0) +
    (entry.order ? entry.order.key.length + (entry.order.position?.length ?? 0) : 0);
  return ENTRY_OVERHEAD_BYTES + 2 * chars;
}
