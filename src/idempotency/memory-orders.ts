import { isBefore } from "./position.js";

/** One order key's state in the memory store. */
interface OrderEntry {
  /** Newest position a notification of this key completed at. */
  position?: string;
  /** The claim holding the key, and until when (epoch ms). */
  owner?: string;
  leaseUntil?: number;
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
 * that holds it. Kept as the records are (insertion-ordered `Map`, retention from the last change, a
 * cap), and never dropping a key held under a live lease. A dropped position only means a very late,
 * older notification is no longer recognised as stale.
 */
export function memoryOrders({ retentionMs, maxEntries, maxBytes, now }: MemoryOrdersOptions) {
  const orders = new Map<string, OrderEntry>();
  let totalBytes = 0;
  const full = () => orders.size > maxEntries || totalBytes > maxBytes;

  function remove(key: string): void {
    const entry = orders.get(key);
    if (!entry) return;
    orders.delete(key);
    totalBytes -= entry.bytes;
  }

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
    let budget = orders.size;
    for (const [oldest, old] of orders) {
      if (!full() || budget-- <= 0) break;
      if (old.owner !== undefined && old.leaseUntil! > at) {
        // A held key goes back behind the others instead.
        orders.delete(oldest);
        orders.set(oldest, old);
      } else remove(oldest);
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

    /** Hold the key for `owner` until `leaseUntil` (taking it, or pushing the lease forward). */
    hold(key: string, owner: string, leaseUntil: number): void {
      const entry = live(key) ?? { expiresAt: 0, bytes: 0 };
      entry.owner = owner;
      entry.leaseUntil = leaseUntil;
      write(key, entry);
    },

    /** Let go of the key if `owner` holds it. */
    letGo(key: string, owner: string): void {
      const entry = live(key);
      if (entry?.owner !== owner) return;
      delete entry.owner;
      delete entry.leaseUntil;
      write(key, entry);
    },

    /** Move the key's position to `position` if that is later; never back. */
    advance(key: string, position: string): void {
      const entry = live(key) ?? { expiresAt: 0, bytes: 0 };
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
