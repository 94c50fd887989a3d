import type { ClaimedOrStale, IdempotencyStore } from "../idempotency/store.js";
import { claimsInTransaction, type TransactionalClaim } from "../idempotency/transaction.js";

/** What `takeNext` found: the lane's next notification, if any, and when it was asked for (its lease counts from then). */
export interface Taken {
  current?: ClaimedOrStale;
  /** The transaction the next notification was claimed in, with a store that claims in one. */
  currentTransaction?: TransactionalClaim;
  sentAt: number;
}

/**
 * The next waiting notification of the ordered lane `key`, claimed for `owner`: in a transaction when
 * the store claims in one (its handler then runs in it). Undefined when the store could not be asked:
 * the lane's notifications still wait, and a later look at one of their jobs runs them.
 */
export async function takeNext(
  store: IdempotencyStore,
  key: string,
  owner: string,
  leaseMs: number,
  handlerTimeoutMs: number,
): Promise<Taken | undefined> {
  const sentAt = performance.now();
  try {
    if (claimsInTransaction(store) && store.takeNextInTransaction) {
      const taken = await store.takeNextInTransaction({ key }, owner, leaseMs, handlerTimeoutMs);
      return taken ? { current: taken.result as ClaimedOrStale, currentTransaction: taken, sentAt } : { sentAt };
    }
    const next = store.lanes ? await store.lanes.takeNext({ key }, owner, leaseMs) : undefined;
    return next ? { current: next, sentAt } : { sentAt };
  } catch {
    return undefined;
  }
}
