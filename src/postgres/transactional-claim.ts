import type { PoolClient } from "pg";
import type { ClaimRequest, ClaimResult } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import { withTimeout } from "../shared/time-limit.js";
import { claimIn, KEY_LOCK_WAIT_MS, lockWaitFor, takeNextIn, type ClaimStatements } from "./claim-sql.js";
import { begin, type Query, type Sessions } from "./sessions.js";
import type { SettleStatements } from "./settle-sql.js";

const over = async () => {};

export interface InboxStatements {
  db: Sessions;
  claims: ClaimStatements;
  settles: SettleStatements;
}

/**
 * Claim in a transaction the handler then writes into. The id's advisory lock and the record's
 * processing row live only in this transaction: if the process dies, PostgreSQL rolls it back and
 * frees the lock when the connection drops, and the next delivery runs at once, with no lease to wait.
 */
export async function transactionalClaim(inbox: InboxStatements, request: ClaimRequest): Promise<TransactionalClaim> {
  const claimed = await inTransaction(
    inbox,
    lockWaitFor(request),
    (query) => claimIn(query, inbox.claims, request),
    request,
  );
  // A claim always has an answer; only takeNext may find nothing.
  return claimed as TransactionalClaim;
}

/** `takeNext` in a transaction the waiter's handler writes into; undefined when none can run now. */
export async function transactionalTakeNext(
  inbox: InboxStatements,
  key: string,
  owner: string,
  leaseMs: number,
): Promise<TransactionalClaim | undefined> {
  const taken = await inTransaction(inbox, KEY_LOCK_WAIT_MS, async (query) =>
    takeNextIn(query, inbox.claims, key, owner, leaseMs),
  );
  return taken.result === undefined ? undefined : (taken as TransactionalClaim);
}

/**
 * Open a transaction, claim in it, and keep it open for the handler when the claim is one to run
 * (claimed or stale: the caller's own notification, or an older one of its subscription handed over
 * from the waiting list). Any other answer ends the transaction at once.
 */
async function inTransaction(
  { db, claims, settles }: InboxStatements,
  lockWaitMs: number | undefined,
  claim: (query: Query) => Promise<ClaimResult | undefined>,
  own?: ClaimRequest,
): Promise<Omit<TransactionalClaim, "result"> & { result: ClaimResult | undefined }> {
  const client = await db.connect();
  const query = db.queryOn(client);
  let result;
  try {
    await query(begin(lockWaitMs));
    result = await claim(query);
    if (result?.status !== "claimed" && result?.status !== "stale") {
      await query("COMMIT");
      client.release();
      return { result, transaction: undefined, commit: over, rollback: over, detach: over };
    }
    // The handler's own statements wait for locks as the merchant's database is set to.
    if (lockWaitMs !== undefined) await query("RESET lock_timeout");
  } catch (err) {
    client.release(err instanceof Error ? err : new Error(String(err)));
    throw db.unavailable(err);
  }
  const claimed = result;
  let ended = false;

  /** Undo the transaction: a rollback when the client is free, or a dropped connection when it is not. */
  async function abandon(client: PoolClient, destroy: boolean): Promise<void> {
    if (!destroy) {
      try {
        await withTimeout(client.query("ROLLBACK"), 1_000, () => new Error("rollback took too long"));
        client.release();
        return;
      } catch {}
    }
    // Dropping the connection makes PostgreSQL roll the transaction back and free its locks.
    client.release(new Error("transaction abandoned"));
  }

  /**
   * The failed attempt, written after the rollback. The caller's own record may not exist any more
   * (its first claim rolled back with the rest), so it is written whole; a waiter's row is kept and
   * only marked failed.
   */
  async function recordFailure(error: string): Promise<void> {
    const lock = claims.lockPrefix + claimed.id;
    const write =
      own && own.id === claimed.id
        ? ([
            settles.failAfterRollback,
            [lock, own.id, own.order?.key ?? null, own.order?.position ?? null, own.fingerprint, own.owner],
          ] as const)
        : ([settles.failWaiterAfterRollback, [lock, claimed.id, claimed.owner]] as const);
    await db.withClient((q) => q(write[0], [...write[1], claimed.attempt, error])).catch(() => {});
  }

  return {
    result: claimed,
    transaction: client,
    async commit(answer) {
      if (ended) return;
      ended = true;
      try {
        const values = [claimed.id, claimed.owner, JSON.stringify(answer)];
        const [done] = await query<{ n: number }>(settles.complete, values);
        if (done!.n !== 1) throw new Error("the claim's record was not found in its own transaction");
        await query("COMMIT");
        client.release();
      } catch (err) {
        // A statement the handler broke (the transaction is aborted), or a lost connection: nothing committed.
        await abandon(client, false);
        await recordFailure("commit_failed");
        throw err;
      }
    },
    async detach() {
      if (ended) return;
      ended = true;
      try {
        await query("COMMIT");
        client.release();
      } catch (err) {
        client.release(err instanceof Error ? err : new Error(String(err)));
        throw db.unavailable(err);
      }
    },
    async commitQueued() {
      if (ended) return;
      ended = true;
      try {
        const [marked] = await query<{ n: number }>(settles.markQueued, [claimed.id, claimed.owner]);
        if (marked!.n !== 1) throw new Error("the claim's record was not found in its own transaction");
        await query("COMMIT");
        client.release();
      } catch (err) {
        // Nothing committed: neither the claim nor the job inserted beside it.
        await abandon(client, false);
        throw db.unavailable(err);
      }
    },
    async discard() {
      if (ended) return;
      ended = true;
      await abandon(client, false);
    },
    async rollback(error) {
      if (ended) return;
      ended = true;
      // A timed-out handler may still be running a statement on the client: drop it rather than queue behind it.
      await abandon(client, error === "handler_timeout");
      await recordFailure(error);
    },
  };
}
