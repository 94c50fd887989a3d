import type { Answer } from "../answer/answer.js";
import {
  DEFAULT_LEASE_MS,
  DEFAULT_RETENTION_SECONDS,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyRecord,
  type IdempotencyStore,
} from "./store.js";

export interface MemoryStoreOptions {
  /** How long a record is kept after its last change. Default 7 days. */
  retentionSeconds?: number;
  /**
   * Most records kept; the least recently changed are dropped first, so memory stays bounded.
   * A dropped completed record means a very late duplicate runs again. Default 100,000 (about 30 MB).
   */
  maxEntries?: number;
  /** Clock in epoch ms; tests move it to expire leases. */
  now?: () => number;
}

interface Entry extends IdempotencyRecord {
  expiresAt: number;
}

/**
 * The embedded default store: one process, no persistence. It gives exactly-once per id within the
 * process (concurrent duplicates, retries after failure); across processes or restarts use `redisStore`.
 *
 * A `Map` keeps insertion order, and every write re-inserts its key, so the map's head is always the
 * least recently written record: expiry and the size cap both trim from the head in O(1) per record.
 */
export function memoryStore(options: MemoryStoreOptions = {}): IdempotencyStore & { readonly size: number } {
  const retentionMs = (options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS) * 1000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  const records = new Map<string, Entry>();

  function write(id: string, entry: Entry): void {
    records.delete(id);
    records.set(id, entry);
    trim(entry.expiresAt - retentionMs);
  }

  let writes = 0;
  /** Evict past the cap on every write; sweep expired records every 1,024 writes (reads check expiry anyway). */
  function trim(at: number): void {
    if (records.size <= maxEntries && (++writes & 1023) !== 0) return;
    for (const [id, entry] of records) {
      if (records.size > maxEntries || entry.expiresAt <= at) records.delete(id);
      else break;
    }
  }

  function live(id: string): Entry | undefined {
    const entry = records.get(id);
    if (entry && entry.expiresAt <= now()) {
      records.delete(id);
      return undefined;
    }
    return entry;
  }

  /** Apply `change` only when `owner` still holds the record in one of `states`. */
  function ownedUpdate(id: string, owner: string, states: readonly string[], change: (entry: Entry) => void): boolean {
    const entry = live(id);
    if (!entry || entry.owner !== owner || !states.includes(entry.state)) return false;
    change(entry);
    entry.expiresAt = now() + retentionMs;
    write(id, entry);
    return true;
  }

  return {
    get size() {
      return records.size;
    },

    claim({ id, fingerprint, owner, leaseMs, takeQueued }: ClaimRequest): ClaimResult {
      const at = now();
      const entry = live(id);
      if (entry) {
        if (entry.fingerprint !== fingerprint && entry.state !== "failed") return { status: "conflict" };
        if (entry.state === "completed") return { status: "completed", answer: entry.answer! };
        if (entry.state === "queued" && !takeQueued) return { status: "queued" };
        if (entry.state === "processing" && entry.leaseUntil! > at) {
          return { status: "processing", retryAfterMs: entry.leaseUntil! - at };
        }
      }
      const attempts = (entry?.attempts ?? 0) + 1;
      write(id, { state: "processing", fingerprint, owner, leaseUntil: at + leaseMs, attempts, expiresAt: at + retentionMs });
      return { status: "claimed", attempt: attempts };
    },

    extend(id, owner, leaseMs = DEFAULT_LEASE_MS) {
      return ownedUpdate(id, owner, ["processing"], (entry) => {
        entry.leaseUntil = now() + leaseMs;
      });
    },

    complete(id, owner, answer: Answer) {
      return ownedUpdate(id, owner, ["processing"], (entry) => {
        entry.state = "completed";
        entry.answer = answer;
        delete entry.leaseUntil;
        delete entry.error;
      });
    },

    fail(id, owner, error) {
      return ownedUpdate(id, owner, ["processing"], (entry) => {
        entry.state = "failed";
        entry.error = error;
        delete entry.leaseUntil;
      });
    },

    markQueued(id, owner) {
      return ownedUpdate(id, owner, ["processing"], (entry) => {
        entry.state = "queued";
        delete entry.leaseUntil;
      });
    },

    release(id, owner) {
      const entry = live(id);
      if (!entry || entry.owner !== owner || (entry.state !== "processing" && entry.state !== "queued")) return false;
      records.delete(id);
      return true;
    },

    get(id) {
      const entry = live(id);
      if (!entry) return undefined;
      const { expiresAt: _expiresAt, ...record } = entry;
      return record;
    },
  };
}
