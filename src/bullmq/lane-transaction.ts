import type { HandlerObserver } from "../dispatch/handler-observer.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";

/**
 * How a failed run of an ordered lane, claimed in a transaction, is settled: in how many ms it is
 * retried in its place (attempts left, or its dead letter not written yet), or undefined when it is
 * not (its last run, or refused for good: a dead letter).
 */
export type LaneRetry = (err: unknown) => Promise<number | undefined>;

/** Whether a claim made in `transaction` can go back in line in it (a store with `requeueInLane`). */
export const requeuesInLane = (transaction: TransactionalClaim | undefined): boolean =>
  transaction?.savepoint !== undefined && transaction.requeueInLane !== undefined;

/**
 * A lane's claim made in a transaction (postgresStore), whose failed run with attempts left goes back
 * at its place in the subscription's lane in that same transaction (`requeueInLane`), the
 * subscription held until the retry, as `lanes.retry` does for a store that claims outside one. Rolled
 * back and failed instead, the record would let the lane go on: newer notifications would complete
 * first and the retry would find its own notification stale. `retried` hears of a run put back in line.
 * The handler's error is seen through the returned observer, as the rollback is told only its outcome.
 */
export async function requeueingInLane(
  transaction: TransactionalClaim,
  attempt: number,
  retryInMs: LaneRetry,
  retried: (err: unknown, inMs: number) => void,
  observe: HandlerObserver | undefined,
): Promise<{ transaction: TransactionalClaim; observe: HandlerObserver }> {
  // Where the requeue rolls the handler's writes back to: set before the handler starts.
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
    const inMs = thrown ? await retryInMs(thrown.err) : undefined;
    if (thrown === undefined) return transaction.rollback(error);
    // Its last run (or refused for good): failed in the same transaction, so the record is never back
    // in line with its subscription free in between, for another worker to run it again.
    if (inMs === undefined)
      return void (await (transaction.failWithin
        ? transaction.failWithin(error, async () => {})
        : transaction.rollback(error)));
    const err = thrown.err;
    const kept = await transaction.requeueInLane!(attempt, error, async () => inMs);
    if (kept) retried(err, inMs);
  };
  return { transaction: wrapped, observe: observing };
}
