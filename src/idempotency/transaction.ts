import type { ClaimRequest, ClaimResult, IdempotencyStore, StoredAnswer } from "./store.js";

declare global {
  namespace MerchantWebhooks {
    /**
     * Filled by a store entry point that runs handlers in a database transaction: importing
     * `merchant-webhooks/postgres` adds `transaction: pg.PoolClient`, so `ctx.transaction` is typed.
     */
    interface TransactionTypes {}
  }
}

/** What `ctx.transaction` holds: the augmenting store's client type, or `undefined` without one. */
export type TransactionHandle = MerchantWebhooks.TransactionTypes extends { transaction: infer T } ? T : undefined;

/**
 * A claim made inside an open database transaction. For `claimed` and `stale` results the caller
 * runs the handler with `transaction`, then calls exactly one of `commit` or `rollback`; for every
 * other result the transaction is already over and both do nothing.
 */
export interface TransactionalClaim {
  readonly result: ClaimResult;
  /** The open transaction the handler's writes go into (`ctx.transaction`). */
  readonly transaction: unknown;
  /** Record the completion with `answer` in the same transaction, then commit it; throws if the commit fails. */
  commit(answer: StoredAnswer): Promise<void>;
  /** Roll back everything the handler wrote, then record the failed attempt outside that transaction. */
  rollback(error: string): Promise<void>;
  /**
   * Commit the claim as it is, to be run later under its lease with the plain store methods (a
   * notification handed to a queue).
   */
  detach(): Promise<void>;
  /**
   * Mark the record queued in the same transaction, then commit: a queue that inserts its job in this
   * transaction (`NotificationQueue.enqueueInTransaction`) commits the claim, the mark and the job together.
   */
  commitQueued?(): Promise<void>;
  /** Roll back the claim with everything in its transaction and record nothing: as if never claimed. */
  discard?(): Promise<void>;
  /**
   * The run's number as the queue counts it, for a claim the store counted otherwise (a waiting notification run
   * from its key's list, whose job was read only after the claim): kept on the record, in the claim's
   * transaction, and in the result's `attempt`. Called before the handler starts.
   */
  countAttempt?(attempt: number): Promise<void>;
  /** Mark where `requeueInLane` rolls the handler's writes back to: called before the handler starts. */
  savepoint?(): Promise<void>;
  /**
   * An ordered claim whose attempt failed: roll the handler's writes back to the savepoint, then ask
   * `retry` (given the transaction) in how many ms the queue retries it, after failing the job in it.
   * With an answer, commit the record back at its place in its key's lane, with `attempt` and
   * `error`, the key held until then, so nothing later of the key runs first: true. Without one, or
   * if that cannot be done, everything is rolled back and the failure recorded as `rollback` does: false.
   */
  requeueInLane?(
    attempt: number,
    error: string,
    retry: (transaction: unknown) => Promise<number | undefined>,
  ): Promise<boolean>;
  /**
   * A claim whose attempt failed: roll the handler's writes back to the savepoint, run `settle` in the
   * transaction (a queue fails the claim's job there, so the job is never free to another worker
   * between the run and its failure), mark the record failed with `error` in it, and commit: true.
   * If that cannot be done, everything is rolled back and the failure recorded as `rollback` does: false.
   * Without `settle`, no handler ran (a claim with nothing to run it from): there is nothing to roll
   * back to, and the record is failed in the claim's own transaction, so it is never free to another
   * claim between an undone claim and its recorded failure.
   */
  failWithin?(error: string, settle?: (transaction: unknown) => Promise<void>): Promise<boolean>;
  /**
   * Call `stop` at once if the transaction is lost under the handler (it ended, or a statement failed
   * and the database let go of its locks): another delivery may run the notification now.
   */
  watchLoss?(stop: (error: Error) => void): void;
}

/**
 * A store whose record can commit in the same transaction as the handler's effects. The dispatch
 * code knows only this shape; the store decides what a transaction is.
 */
export interface TransactionalStore extends IdempotencyStore {
  claimInTransaction(request: ClaimRequest): Promise<TransactionalClaim>;
  /** `takeNext` in a transaction for the waiting notification's handler; undefined when none can run now. */
  takeNextInTransaction?(
    order: { key: string },
    owner: string,
    leaseMs: number,
    handlerTimeoutMs?: number,
  ): Promise<TransactionalClaim | undefined>;
}

export function claimsInTransaction(store: IdempotencyStore): store is TransactionalStore {
  return typeof (store as Partial<TransactionalStore>).claimInTransaction === "function";
}
