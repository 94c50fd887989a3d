import type { ClaimResult, IdempotencyRecord } from "../idempotency/store.js";
import { SCRIPTS } from "./lua/scripts.generated.js";

/**
 * With ordering, a record lives beside its order key (`orderedKeys`), so that on Redis Cluster one
 * script sees both. The same id sent again under another order key (another subscription: a
 * different payload) would then meet no record and run a second time, where every other store
 * answers 409 or 422. One small hash per id names the order key it was claimed under: a claim under
 * another key is answered from that key's record instead, as if the record were its own.
 */
export function bindingKey(prefix: string, id: string): string {
  return `${prefix}order-of:${id}`;
}

/**
 * KEYS: the id's binding. ARGV: order key, retentionMs, the key it may be moved from ('' for none).
 * Binds the id to the order key when unbound, bound to it already, or bound to the key it may be
 * moved from, and answers {}; otherwise answers {bound key, ms since it was bound}. The binding
 * lasts as long as a record: its retention, from its last claim.
 */
export const BIND_ORDER = SCRIPTS.BIND_ORDER;

/**
 * What a claim of the id under another order key meets, read from the record under the key the id
 * is bound to: the answers of `CLAIM_CHECKS` for its own record. Undefined when that record can be
 * taken over (failed, its lease lapsed, or never written though bound longer than a lease ago): the
 * binding then moves to the claim's key.
 */
export function claimUnderBoundKey(
  record: IdempotencyRecord | undefined,
  fingerprint: string,
  boundForMs: number,
  leaseMs: number,
): ClaimResult | undefined {
  if (!record) {
    // Bound a moment ago: its claim is on the way. Wait for it rather than race it.
    return boundForMs < leaseMs ? { status: "processing", retryAfterMs: leaseMs - boundForMs } : undefined;
  }
  switch (record.state) {
    case "completed":
      return record.fingerprint === fingerprint
        ? { status: "completed", answer: record.answer! }
        : { status: "conflict" };
    case "queued":
      return record.fingerprint === fingerprint
        ? { status: "queued" }
        : { status: "processing", retryAfterMs: leaseMs };
    case "processing": {
      const left = (record.leaseUntil ?? 0) - Date.now();
      return left > 0 ? { status: "processing", retryAfterMs: left } : undefined;
    }
    case "failed":
      return undefined;
  }
}
