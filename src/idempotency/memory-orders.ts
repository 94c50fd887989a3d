import { isBefore } from "./position.js";
import { WriteOrder, type Written } from "./write-order.js";

/** One order key's state in the memory store. */
interface OrderEntry extends Written {
  /** Newest position a notification of this key completed at. */
  position?: string;
  /** The claim holding the key, and until when (epoch ms). */
  owner?: string;
  leaseUntil?: number;
  /** The id of the notification a worker holds the key for (not a receiver's in-process run). */
  holder?: string;
  /** When the holder took the key, and how long the last hold took (for the expected wait). */
  heldSince?: number;
  lastHeldMs?: number;
  expiresAt: number;
  /** Estimated bytes the key and its entry hold, counted in the table's total. */
  bytes: number;
}

/** What a key costs beyond its strings: the Map slot, the entry object and its fields. */
const ORDER_OVERHEAD_BYTES = 160;

/** Strings counted at two bytes a character, as the records are. */
const sizeOf = (key: string, entry: OrderEntry): number =>
  ORDER_OVERHEAD_BYTES + 2 * (key.length + (entry.position?.length ?? 0) + (entry.owner?.length ?? 0));

export interface MemoryOrdersOptions {
  retentionMs: number;
  /** Most keys kept; the least recently changed keys that nobody holds are dropped first. */
  maxEntries: number;
  /** Most bytes the keys may take (a key is as long as the sender's ids make it); dropped the same way. */
  maxBytes: number;
  now: () => number;
}

/**
 * The memory store's side table of order keys: each key's newest completed position and the claim
 * that holds it. Kept as the records are (a `Map` lined up by last write, retention from the last change, a
 * cap), and never dropping a key held under a live lease. A dropped position only means a very late,
 * older notification is no longer recognised as stale.
 */
export function memoryOrders({ retentionMs, maxEntries, maxBytes, now }: MemoryOrdersOptions) {
  const orders = new Map<string, OrderEntry>();
  const writeOrder = new WriteOrder<OrderEntry>();
  let totalBytes = 0;
  const full = () => orders.size > maxEntries || totalBytes > maxBytes;

  function remove(key: string): void {
    const entry = orders.get(key);
    if (!entry) return;
    orders.delete(key);
    totalBytes -= entry.bytes;
    writeOrder.dropped(entry);
  }
  /**
   * Until when each key's lane has a runner (a worker running its lane, or a drain job on
   * its way), and the receiver's claim that set it for a drain job it is about to queue (`wokenBy`,
   * until a worker takes the runner over); kept apart from the entries, and dropped when the runner
   * stops or its time is up.
   */
  const runners = new Map<string, { until: number; wokenBy?: string; wokenAt?: number }>();
  /** Keys whose runner waits for a failed notification's retry, until when (see `lanes.retry`). */
  const retries = new Map<string, number>();
  /** Keys whose lane holds at a dead letter (`onDeadLetter: "hold"`, as the receivers' claims give it). */
  const holding = new Set<string>();
  /** Each key's lane: ids queued in order, sorted by position (none first), then id. */
  const waiting = new Map<string, Array<{ id: string; member: string }>>();
  /**
   * The lanes index, for the sweep (`lanes.stalled`): each key with a waiting notification, with when it was last
   * appended to (or looked at), and the notification whose job was queued to run it last (its drain
   * job). A key leaves it with its last waiting notification.
   */
  const lanes = new Map<string, { seen: number; drain?: string }>();

  function live(key: string): OrderEntry | undefined {
    const entry = orders.get(key);
    if (entry && entry.expiresAt <= now()) {
      remove(key);
      return undefined;
    }
    return entry;
  }

  function write(key: string, entry: OrderEntry): void {
    const at = now();
    entry.expiresAt = Math.max(at + retentionMs, entry.leaseUntil ?? 0);
    remove(key);
    if (entry.position === undefined && entry.owner === undefined) return;
    entry.bytes = sizeOf(key, entry);
    orders.set(key, entry);
    totalBytes += entry.bytes;
    writeOrder.wrote(key, entry, orders.size);
    let budget = orders.size;
    for (let old = writeOrder.oldest(); old && full() && budget-- > 0; old = writeOrder.oldest()) {
      const oldest = writeOrder.oldestKey;
      // A held key goes back behind the others instead.
      if (old.owner !== undefined && old.leaseUntil! > at) writeOrder.wrote(oldest, old, orders.size);
      else remove(oldest);
    }
  }

  return {
    /** The key's newest completed position, if it has one. */
    position(key: string): string | undefined {
      return live(key)?.position;
    },

    /** Lease time left of another claim holding the key; undefined when the key is free for `owner`. */
    heldFor(key: string, owner: string): number | undefined {
      const entry = live(key);
      if (entry?.owner === undefined || entry.owner === owner) return undefined;
      const left = entry.leaseUntil! - now();
      return left > 0 ? left : undefined;
    },

    /**
     * Hold the key for `owner` until `leaseUntil` (taking it, or pushing the lease forward); a worker
     * names the notification it holds it for (`holder`), to be put back in line should it die.
     */
    hold(key: string, owner: string, leaseUntil: number, holder?: string): void {
      const entry = live(key) ?? { expiresAt: 0, bytes: 0, written: 0 };
      if (entry.owner !== owner) {
        entry.heldSince = now();
        if (holder === undefined) delete entry.holder;
      }
      if (holder !== undefined) entry.holder = holder;
      entry.owner = owner;
      entry.leaseUntil = leaseUntil;
      write(key, entry);
    },

    /**
     * For an append to the key's lane: whether the key has a runner (a live holder, or a runner
     * marked within its lease); without one, the caller becomes it until `until` (see `lanes.append`).
     */
    wakeRunner(key: string, until: number, wokenBy: string, drain: string): boolean {
      const at = now();
      const entry = live(key);
      if (entry?.owner !== undefined && entry.leaseUntil! > at) return false;
      if ((runners.get(key)?.until ?? 0) > at) return false;
      runners.set(key, { until, wokenBy, wokenAt: at });
      lanes.set(key, { seen: lanes.get(key)?.seen ?? at, drain });
      return true;
    },

    /** The lanes listed for the sweep, and what it needs of each (see `lanes`). */
    lanes(): Map<string, { seen: number; drain?: string }> {
      return lanes;
    },

    /** Whether the key has a runner: a live holder, or a runner marked within its lease. */
    hasRunner(key: string): boolean {
      const at = now();
      const entry = live(key);
      return (entry?.owner !== undefined && entry.leaseUntil! > at) || (runners.get(key)?.until ?? 0) > at;
    },

    /** Whether a worker holds the key under a live lease, or a runner waits for a retry until `retryUntil`. */
    beingRun(key: string): boolean {
      const entry = live(key);
      const retry = retries.get(key);
      if (retry !== undefined && retry <= now()) retries.delete(key);
      return (entry?.owner !== undefined && entry.leaseUntil! > now()) || (retry ?? 0) > now();
    },

    /** A runner put a failed notification of the key back for its retry, and comes back by `until`. */
    retryUntil(key: string, until: number): void {
      retries.set(key, until);
    },

    /** When a receiver's append woke the key's runner, while no worker has taken the lane over since. */
    wokenAt(key: string): number | undefined {
      return runners.get(key)?.wokenAt;
    },

    /** The drain job `wokenBy`'s append woke was never queued: the key has no runner after all. */
    unwake(key: string, wokenBy: string): void {
      if (runners.get(key)?.wokenBy === wokenBy) runners.delete(key);
    },

    /** A runner took the key's next notification (until `until`), or found none and stopped (undefined). */
    runner(key: string, until: number | undefined): void {
      if (until === undefined) runners.delete(key);
      else runners.set(key, { until });
    },

    /** The notification a worker held the key for, and under which owner, once that hold has lapsed (forgotten then). */
    lapsedHolder(key: string): { id: string; owner: string } | undefined {
      const entry = live(key);
      if (entry?.holder === undefined || entry.owner === undefined || entry.leaseUntil! > now()) return undefined;
      const lapsed = { id: entry.holder, owner: entry.owner };
      delete entry.holder;
      return lapsed;
    },

    /** Let go of the key if `owner` holds it, keeping how long it was held. */
    letGo(key: string, owner: string): void {
      const entry = live(key);
      if (entry?.owner !== owner) return;
      if (entry.heldSince !== undefined) entry.lastHeldMs = now() - entry.heldSince;
      delete entry.owner;
      delete entry.leaseUntil;
      delete entry.heldSince;
      delete entry.holder;
      write(key, entry);
    },

    /** What a delivery that meets the key held may expect to wait: the last hold's length, within the lease. */
    expectedWait(key: string, left: number): number {
      const entry = live(key);
      if (entry?.lastHeldMs === undefined || entry.heldSince === undefined) return left;
      return Math.min(left, Math.max(1, entry.lastHeldMs - (now() - entry.heldSince)));
    },

    /** The lane's policy for a dead letter, as a receiver's claim gives it: hold, or go on (skip). */
    policy(key: string, hold: boolean): void {
      if (hold) holding.add(key);
      else holding.delete(key);
    },

    /** Whether the key's lane holds at a dead letter. */
    holds(key: string): boolean {
      return holding.has(key);
    },

    /** Put `id` in the key's lane at its position (once). */
    wait(key: string, id: string, position: string | undefined): void {
      const list = waiting.get(key) ?? [];
      if (list.some((waiter) => waiter.id === id)) return;
      const member = `${position ?? ""}\n${id}`;
      let at = list.length;
      while (at > 0 && list[at - 1]!.member > member) at--;
      list.splice(at, 0, { id, member });
      waiting.set(key, list);
      const lane = lanes.get(key);
      if (lane) lane.seen = now();
      else lanes.set(key, { seen: now() });
    },

    /** Take `id` out of the key's lane. */
    leave(key: string, id: string): void {
      const list = waiting.get(key);
      if (!list) return;
      const at = list.findIndex((waiter) => waiter.id === id);
      if (at >= 0) list.splice(at, 1);
      // Nothing left to find: in one process, a runner that died took the store's memory with it.
      if (list.length === 0) {
        waiting.delete(key);
        lanes.delete(key);
      }
    },

    /** The keys with a lane. */
    waitingKeys(): IterableIterator<string> {
      return waiting.keys();
    },

    /** The ids in the key's lane, first to run first. */
    waiters(key: string): readonly string[] {
      return (waiting.get(key) ?? []).map((waiter) => waiter.id);
    },

    /** Move the key's position to `position` if that is later; never back. */
    advance(key: string, position: string): void {
      const entry = live(key) ?? { expiresAt: 0, bytes: 0, written: 0 };
      if (entry.position === undefined || isBefore(entry.position, position)) entry.position = position;
      write(key, entry);
    },

    get size(): number {
      return orders.size;
    },

    /** Estimated bytes the keys hold, within `maxBytes`. */
    get bytes(): number {
      return totalBytes;
    },
  };
}

export type MemoryOrders = ReturnType<typeof memoryOrders>;
