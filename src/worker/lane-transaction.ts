import type { HandlerObserver } from "../dispatch/handler-observer.js";
import type { ClaimedOrStale } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";

/** Work the queue does on its job inside the claim's transaction (`transaction` is the store's handle). */
export type InTransaction<T> = (transaction: unknown) => Promise<T>;

/**
 * How a failed run claimed in a transaction is settled in that transaction: what is the queue's own.
 * The order of things (savepoint, back in line or failed with the record, or rolled back) is
 * `settlingInTransaction`'s, the same for every queue.
 */
export interface TransactionFailurePolicy {
  /** False: the failure says nothing about the handler (the worker's close cut it off): rolled back, nothing settled. */
  counts?: () => boolean;
  /**
   * A failed run (`err`, recorded as `outcome`) of an ordered lane that goes back in line at its place: what does the queue's part in
   * the transaction (fail its job there, if the queue fails one) and answers in how many ms the retry
   * is due (undefined: it cannot be, and everything rolls back). Undefined: it does not go back in
   * line (not in a lane, its last run, or refused for good by its handler).
   */
  requeue(err: unknown, outcome: string): Promise<InTransaction<number | undefined> | undefined>;
  /**
   * A failed run that does not go back in line: what fails its job in the transaction, with the record
   * failed in it too (`failWithin`). Undefined: the transaction is rolled back and the failure recorded
   * after it.
   */
  failWith(err: unknown, outcome: string): InTransaction<void> | undefined;
  /** Heard once the failure was settled in the transaction: back in line (with its due time) or failed. */
  settled?(err: unknown, requeuedInMs: number | undefined): void;
}

/**
 * The claim's transaction, whose rollback after a failed handler settles the failure in it, so the
 * record is never free in between for another worker to run again with the same count:
 * - an ordered run with attempts left goes back at its place in its lane's waiting list
 *   (`requeueInLane`), the lane held until its retry, as `lanes.retry` does for a store that claims
 *   outside a transaction. Rolled back and failed instead, the record would let the lane go on: newer
 *   notifications would complete first and the retry would find its own notification stale;
 * - any other failed run is failed in it with its job (`failWithin`), when the queue fails one there.
 *
 * The savepoint the handler's writes roll back to is set here, before the handler starts: a store
 * that cannot set it rejects (after rolling the claim back). The handler's error reaches the
 * rollback, which is told only its outcome, through the returned observer (wrapping `observe`).
 */
export async function settlingInTransaction(
  transaction: TransactionalClaim,
  policy: TransactionFailurePolicy,
  observe: HandlerObserver | undefined,
): Promise<{ transaction: TransactionalClaim; observe: HandlerObserver }> {
  try {
    await transaction.savepoint!();
  } catch (err) {
    await transaction.rollback("store_unavailable");
    throw err;
  }
  let thrown: { err: unknown } | undefined;
  function observing<T>(fields: Parameters<HandlerObserver>[0], run: () => Promise<T>): Promise<T> {
    const watched = (): Promise<T> =>
      run().catch((err: unknown) => {
        thrown = { err };
        throw err;
      });
    return observe ? observe(fields, watched) : watched();
  }
  const wrapped: TransactionalClaim = Object.create(transaction) as TransactionalClaim;
  wrapped.rollback = async (error) => {
    if (thrown === undefined || policy.counts?.() === false) return transaction.rollback(error);
    const { err } = thrown;
    const requeue = transaction.requeueInLane ? await policy.requeue(err, error) : undefined;
    if (requeue) {
      let dueInMs: number | undefined;
      // The store's count of the run, as the claim (or `countAttempt`) left it: the record keeps it.
      const attempt = (transaction.result as ClaimedOrStale).attempt;
      const kept = await transaction.requeueInLane!(attempt, error, async (handle) => {
        dueInMs = await requeue(handle);
        return dueInMs;
      });
      if (kept) policy.settled?.(err, dueInMs);
      return;
    }
    const fail = transaction.failWithin ? policy.failWith(err, error) : undefined;
    if (!fail) return transaction.rollback(error);
    if (await transaction.failWithin!(error, fail)) policy.settled?.(err, undefined);
  };
  return { transaction: wrapped, observe: observing };
}

/** Whether a claim made in `transaction` can go back in line in it (a store with `requeueInLane`). */
export const requeuesInLane = (transaction: TransactionalClaim | undefined): boolean =>
  transaction?.savepoint !== undefined && transaction.requeueInLane !== undefined;

/** Whether a claim made in `transaction` can be failed in it, with the queue's job (a store with `failWithin`). */
export const failsWithin = (transaction: TransactionalClaim | undefined): boolean =>
  transaction?.savepoint !== undefined && transaction.failWithin !== undefined;
