import type { PoolClient } from "pg";
import { type ClaimFlags, claimFlags } from "../idempotency/claim-flags.js";
import { listedAsOf } from "../idempotency/listed-as.js";
import type { ClaimedOrStale, ClaimRequest, ClaimResult, StoredAnswer } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import { clockFor } from "../shared/coarse-clock.js";
import { coded } from "../shared/errors.js";
import { withTimeout } from "../shared/time-limit.js";
import type { BackendCanceller } from "./cancel-backend.js";
import {
  type ClaimStatements,
  claimIn,
  FIRST_ANSWER,
  KEY_LOCK_WAIT_MS,
  lockWaitFor,
  lookInline,
  parseLook,
  takeNextIn,
  type WrittenRow,
} from "./claim-sql.js";
import { fenceCall, sealedCommit } from "./fence-sql.js";
import { firstClaimExecute, readLockedSql } from "./first-claim-sql.js";
import { guardTransaction, type TransactionLostError } from "./guarded-transaction.js";
import type { QualifiedNames } from "./names.js";
import { executePrepared, type PreparedStatement, type PreparedUse } from "./prepared.js";
import { begin, literal, type Query, retryConflicts, type Sessions, sqlState } from "./sessions.js";
import type { CompletedWrite, SettleStatements } from "./settle-sql.js";

const over = async () => {};

/** Where an ordered claim's failed attempt rolls its handler's writes back to (`requeueInLane`). */
export const HANDLER_SAVEPOINT = "merchant_webhooks_handler";

/** SQLSTATE of a statement sent in a transaction a failed statement aborted. */
const IN_FAILED_TRANSACTION = "25P02";

/** Whether `task` has settled by now (a turn of the microtask queue later). */
const settled = (task: Promise<unknown>) =>
  Promise.race([task.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);

export interface InboxStatements {
  db: Sessions;
  names: QualifiedNames;
  claims: ClaimStatements;
  /** A first delivery's claim and a duplicate's, prepared per connection (see firstClaimStatement). */
  firstClaim: PreparedStatement;
  /** Whether statements are prepared (`preparedStatements`, until a pooler shows): one state for every claim path. */
  prepared: PreparedUse;
  settles: SettleStatements;
  canceller: BackendCanceller;
}

/**
 * Claim in a transaction the handler then writes into. The id's advisory lock and the record's
 * processing row (if one is written) live only in this transaction: if the process dies, PostgreSQL
 * rolls it back and frees the lock when the connection drops, and the next delivery runs at once, with
 * no lease to wait.
 */
export async function transactionalClaim(inbox: InboxStatements, asked: ClaimRequest): Promise<TransactionalClaim> {
  const request = claimFlags(asked);
  const { claims, firstClaim } = inbox;
  const deferWrite = defersFirstWrite(inbox.db, request);
  const claimed = await inTransaction(
    inbox,
    lockWaitFor(request),
    // BEGIN and the claim's first statement, one message, one round trip.
    async (query, written, opening, bound, client) => {
      // A first delivery or a duplicate in plain statements (see firstClaimStatement), any other through the function.
      let looked: { look: string } | undefined;
      if (deferWrite) {
        const first = await executePrepared<{ look: string }>(
          inbox.prepared,
          client,
          [firstClaim, inbox.settles.seal],
          query,
          // After BEGIN, which must set the level before any statement (a PREPARE outlives a rollback).
          (prepare) => `${opening}; ${prepare}${firstClaimExecute(firstClaim, inbox.names, request, bound)}`,
          // The claim function, its record written as it will commit too: its plans are the server process's.
          () => `${opening}; ${lookInline(claims, request, bound, true)}`,
        );
        [looked] = first.rows;
        // The seal is prepared where the claim was: in this transaction's server connection.
        written.prepared = first.prepared;
      } else [looked] = await query<{ look: string }>(`${opening}; ${lookInline(claims, request, bound, false)}`);
      let look = parseLook(looked!.look);
      if (look.unread)
        look = parseLook(
          (await query<{ look: string }>(readLockedSql(inbox.names, claims.retentionSeconds, request)))[0]!.look,
        );
      return claimIn(query, claims, request, written, look, deferWrite);
    },
    request,
    request.handlerTimeoutMs,
    request.owner,
  );
  // A claim always has an answer; only takeNext may find nothing.
  return claimed as TransactionalClaim;
}

/**
 * Whether a first claim of the id writes its record once, as it will commit (completed, with the run's
 * usual answer: claimFunctionSql's `p_answer`), rather than inserting it as processing to update it as
 * the run ends: one row written instead of two, and the completion only seals. The id's advisory lock,
 * held by the transaction, is what keeps another delivery out either way: the row, uncommitted, is
 * never seen outside, and a run that fails rolls it back with its effects. Only at `read
 * committed`, where the record read after the lock is the latest committed one: at `repeatable read`
 * or `serializable` a record committed meanwhile would only show as a conflict at the end, after the
 * handler ran. Never for an ordered claim or one handed to a durable queue, whose rows other steps read
 * within the transaction, nor for a worker taking over a queued record, which exists already.
 */
export const defersFirstWrite = (db: Sessions, { order, forQueue, takeQueued }: ClaimFlags) =>
  db.isolationLevel === "read committed" && !order && !forQueue && !takeQueued;

/** `takeNext` in a transaction the waiting notification's handler writes into; undefined when none can run now. */
export async function transactionalTakeNext(
  inbox: InboxStatements,
  key: string,
  owner: string,
  leaseMs: number,
  handlerTimeoutMs?: number,
): Promise<TransactionalClaim | undefined> {
  const taken = await inTransaction(
    inbox,
    KEY_LOCK_WAIT_MS,
    async (query, _written, opening, bound) => {
      // The fence goes up with the opening: a waiting notification's handler runs in this transaction.
      const fence = fenceCall(inbox.names, owner);
      await query(bound === undefined ? `${opening}; ${fence}` : `${opening}; ${bounds(bound)}; ${fence}`);
      return takeNextIn(query, inbox.claims, key, owner, leaseMs);
    },
    undefined,
    handlerTimeoutMs,
    owner,
  );
  return taken.result === undefined ? undefined : (taken as TransactionalClaim);
}

/**
 * Open a transaction, claim in it, and keep it open for the handler when the claim is one to run
 * (claimed or stale: the caller's own notification, or an older one of its subscription handed over
 * from the lane). Any other answer ends the transaction at once.
 */
async function inTransaction(
  inbox: InboxStatements,
  lockWaitMs: number | undefined,
  claim: (
    query: Query,
    written: WrittenRow,
    opening: string,
    bound: number | undefined,
    client: PoolClient,
  ) => Promise<ClaimResult | undefined>,
  own: ClaimFlags | undefined,
  handlerTimeoutMs: number | undefined,
  token: string,
): Promise<Omit<TransactionalClaim, "result"> & { result: ClaimResult | undefined }> {
  const { db } = inbox;
  // The bound on the server is set with the claim: the handler starts right after it.
  const bound = serverBound(db, handlerTimeoutMs);
  const opening = begin(db.isolationLevel, lockWaitMs);
  // A serialization failure or deadlock while claiming rolled everything back: claim again.
  const written: WrittenRow = {};
  const { client, result } = await retryConflicts(async () => {
    written.rowId = undefined;
    written.unwritten = undefined;
    written.completed = undefined;
    written.prepared = undefined;
    const client = await db.connect();
    const query = db.queryOn(client);
    try {
      const result = await claim(query, written, opening, bound, client);
      if (result?.status !== "claimed" && result?.status !== "stale") {
        // Not run here: whatever the claim wrote commits, past the fence it may have put up. A claim
        // that answered for a failed statement (a key's row held elsewhere) has nothing to commit.
        await query(sealedCommit(token)).catch(async (err: unknown) => {
          if (sqlState(err) !== IN_FAILED_TRANSACTION) throw err;
          await query("ROLLBACK");
        });
        db.release(client);
        return { client: undefined, result };
      }
      // The handler's own statements wait for locks as the merchant's database is set to.
      if (lockWaitMs !== undefined) await query("RESET lock_timeout");
      return { client, result };
    } catch (err) {
      db.release(client, err);
      throw db.unavailable(err);
    }
  });
  if (!client) return { result, transaction: undefined, commit: over, rollback: over, detach: over };
  return openClaim(inbox, client, result as ClaimedOrStale, own, bound, written);
}

/**
 * The bound on the transaction on the server, about the handler's time limit: a statement may run that
 * long (so a timed-out one stops even if this process cannot cancel it), and the transaction may sit
 * idle that long, so a frozen or partitioned holder loses the id to the next delivery within that bound.
 * The store's own statement limit is the slack for this process to settle the run. None without a limit.
 */
export function serverBound(db: Sessions, handlerTimeoutMs: number | undefined): number | undefined {
  if (!handlerTimeoutMs || handlerTimeoutMs <= 0) return undefined;
  // Both settings are a 32-bit count of ms on the server; a handler limit near Node's own timer limit
  // plus the slack would be refused, and the claim with it.
  return Math.min(MAX_SERVER_MS, Math.round(handlerTimeoutMs + db.timeoutMs));
}

const MAX_SERVER_MS = 2_147_483_647;

const bounds = (ms: number) =>
  `SET LOCAL statement_timeout = ${ms}; SET LOCAL idle_in_transaction_session_timeout = ${ms}`;

/** The server's own limits again, for a transaction waiting (not running a handler) longer than the bound. */
const UNBOUNDED = "SET LOCAL statement_timeout TO DEFAULT; SET LOCAL idle_in_transaction_session_timeout TO DEFAULT";

/** The claim to run, its transaction still open on `client`: the handler's handle, and how the run ends. */
function openClaim(
  { db, claims, settles, canceller, names }: InboxStatements,
  client: PoolClient,
  opened: ClaimedOrStale,
  own: ClaimFlags | undefined,
  bound: number | undefined,
  written: WrittenRow,
): TransactionalClaim {
  const query = db.queryOn(client);
  // An in-process queue's data (`RunClaim.carried`), kept in the row as the claim commits (`detach`),
  // in the commit's own message: no `kept.keep` after it.
  const keep = keptAtCommit(names, opened, own);
  const claimed: ClaimedOrStale =
    keep === undefined || opened.status !== "claimed" ? opened : { ...opened, kept: true };
  // The handler gets the client behind a guard, closed as soon as the run settles, before anything else.
  // A transaction lost under the handler (ended, or failed outside a savepoint) ends the run at once.
  let stopRun: ((error: TransactionLostError) => void) | undefined;
  const guarded = guardTransaction(client, (error) => stopRun?.(error));
  let ended = false;
  let started = false;
  let lifted = false;

  /**
   * The bound is set with the claim, as the handler starts right after it. A notification may wait for
   * a backpressure slot first, though, with its transaction idle: if the handler has not started within
   * half the bound, the server's own limits come back for the wait, and the bound is set again, ahead
   * of the handler's first query on the same connection, when the handler starts.
   */
  const waitClock = bound === undefined ? undefined : clockFor(Math.ceil(bound / 2));
  const lift = () => {
    if (started || ended) return;
    lifted = true;
    client.query(UNBOUNDED).catch(() => {}); // a broken connection fails the run's own statements just the same
  };
  // On the shared clock of that half-bound, not a timer per claim (a tenth later at most).
  waitClock?.watch(lift);

  function handlerStarts(): void {
    if (started) return;
    started = true;
    waitClock?.unwatch(lift);
    if (lifted && bound !== undefined) client.query(bounds(bound)).catch(() => {});
  }

  function end(): void {
    ended = true;
    waitClock?.unwatch(lift);
    guarded.close();
  }

  /**
   * Undo the transaction. A timed-out handler may still be running a statement: it is cancelled on the
   * server first, so the rollback does not queue behind it and the client goes back to the pool only
   * once its backend is free (dropping the connection instead would leave the backend running its
   * statement, holding its locks and a connection slot, outside the pool's count). A rollback held up
   * by a statement the handler left running (it threw without awaiting one) gets the same cancel, late.
   * A rollback that still does not come back in time drops the connection after all.
   */
  async function abandon(client: PoolClient, cancelFirst: boolean): Promise<void> {
    if (cancelFirst) await canceller.cancelSession(client);
    const rollback = client.query("ROLLBACK").then(
      () => true,
      () => false,
    );
    const within = () =>
      withTimeout(rollback, db.timeoutMs, () => new Error("rollback took too long")).catch(() => false);
    let rolledBack = await within();
    if (!rolledBack && !cancelFirst && !(await settled(rollback))) {
      await canceller.cancelSession(client);
      rolledBack = await within();
    }
    // Dropping the connection makes PostgreSQL roll the transaction back and free its locks.
    if (rolledBack) db.release(client);
    else db.release(client, new Error("transaction abandoned"));
  }

  const writeFirst = () => writeFirstRecord(query, claims, written, own);
  const recordFailure = (error: string) => recordFailedRun({ db, claims, settles }, claimed, own, error);

  return {
    result: claimed,
    // Read once, as the handler's context is made: the handler starts now.
    get transaction() {
      handlerStarts();
      return guarded.handle;
    },
    watchLoss(stop) {
      stopRun = stop;
      if (guarded.lost) stop(guarded.lost);
    },
    async commit(answer) {
      if (ended) return;
      end();
      try {
        // The record completed (or, written so by the claim, sealed) and the COMMIT, one message; a
        // record not found aborts before the COMMIT.
        await query(`${completion(settles, claimed, answer, written, own)}; COMMIT`);
        db.release(client);
      } catch (err) {
        // A statement the handler broke (the transaction is aborted), or a lost connection: nothing committed.
        await abandon(client, false);
        await recordFailure("commit_failed");
        throw err;
      }
    },
    async detach() {
      if (ended) return;
      end();
      try {
        // Handed to a queue, the claim commits as processing, under its lease (its data kept with it).
        await writeFirst();
        await query(keep === undefined ? sealedCommit(claimed.owner) : `${keep}; ${sealedCommit(claimed.owner)}`);
        db.release(client);
      } catch (err) {
        db.release(client, err);
        throw db.unavailable(err);
      }
    },
    async commitQueued() {
      if (ended) return;
      end();
      try {
        await writeFirst();
        const [marked] = await query<{ n: number }>(settles.markQueued, [claimed.id, claimed.owner]);
        if (marked!.n !== 1)
          throw coded(new Error("the claim's record was not found in its own transaction"), "MW_INTERNAL");
        await query(sealedCommit(claimed.owner));
        db.release(client);
      } catch (err) {
        // Nothing committed: neither the claim nor the job inserted beside it.
        await abandon(client, false);
        throw db.unavailable(err);
      }
    },
    async discard() {
      if (ended) return;
      end();
      await abandon(client, false);
    },
    async countAttempt(attempt) {
      await query(settles.setAttempt, [claimed.id, claimed.owner, attempt]);
      claimed.attempt = attempt;
    },
    async savepoint() {
      await query(`SAVEPOINT ${HANDLER_SAVEPOINT}`);
    },
    async requeueInLane(attempt, error, retry) {
      if (ended) return false;
      let retryInMs: number | undefined;
      try {
        // A timed-out handler may still be running a statement: cancelled first, not queued behind.
        if (error === "handler_timeout") await canceller.cancelSession(client);
        await query(`ROLLBACK TO SAVEPOINT ${HANDLER_SAVEPOINT}`);
        retryInMs = await retry(guarded.handle);
        if (retryInMs !== undefined) {
          const [kept] = await query<{ n: number }>(settles.requeueInLane, [
            claimed.id,
            claimed.owner,
            attempt,
            error,
            retryInMs,
          ]);
          if (kept!.n !== 1) retryInMs = undefined;
        }
      } catch {
        retryInMs = undefined;
      }
      end();
      if (retryInMs !== undefined) {
        try {
          // Sealed as the library's own commits are: the fence refuses any other.
          await query(sealedCommit(claimed.owner));
          db.release(client);
          return true;
        } catch {
          // Not committed: nothing of it stands, and the failure is recorded below as any other.
        }
      }
      await abandon(client, false);
      await recordFailure(error);
      return false;
    },
    async failWithin(error, settle) {
      if (ended) return false;
      let failed = false;
      try {
        if (settle) {
          // A timed-out handler may still be running a statement: cancelled first, not queued behind.
          if (error === "handler_timeout") await canceller.cancelSession(client);
          await query(`ROLLBACK TO SAVEPOINT ${HANDLER_SAVEPOINT}`);
          await settle(guarded.handle);
        }
        // A dead letter of a lane that holds stays at its head, in this same statement (see `lanes.fail`).
        const [marked] = await query<{ n: number }>(settles.failInLane, [claimed.id, claimed.owner, error]);
        failed = marked!.n === 1;
      } catch {
        failed = false;
      }
      end();
      if (failed) {
        try {
          // Sealed as the library's own commits are: the fence refuses any other.
          await query(sealedCommit(claimed.owner));
          db.release(client);
          return true;
        } catch {
          // Not committed: nothing of it stands, and the failure is recorded below as any other.
        }
      }
      await abandon(client, false);
      await recordFailure(error);
      return false;
    },
    async rollback(error) {
      if (ended) return;
      end();
      // A timed-out handler may still be running a statement on the client: cancel it rather than queue behind it.
      await abandon(client, error === "handler_timeout");
      await recordFailure(error);
    },
  };
}

/**
 * A first claim's record not written yet (`unwritten`), or written completed ahead of its run's end,
 * written as a claim handed to a queue writes it: processing, attempt 1.
 */
export async function writeFirstRecord(
  query: Query,
  claims: ClaimStatements,
  { unwritten, completed }: WrittenRow,
  own: ClaimFlags | undefined,
): Promise<void> {
  if (!(unwritten || completed) || !own) return;
  const { id, fingerprint, owner, leaseMs } = own;
  const { eventType = null, subscriptionId = null } = listedAsOf(own) ?? {};
  await query(claims.upsert, [
    id,
    null,
    null,
    false,
    fingerprint,
    owner,
    leaseMs,
    1,
    false,
    eventType,
    subscriptionId,
    null,
  ]);
}

/**
 * The statement keeping an in-process queue's data (`RunClaim.carried`) in the row of the unordered
 * record this transaction claimed, as `kept.keep` would (its arguments written in as literals, to go
 * in the commit's message); undefined when the claim carries none.
 */
function keptAtCommit(names: QualifiedNames, claimed: ClaimedOrStale, own: ClaimFlags | undefined): string | undefined {
  if (own?.carried === undefined || own.forQueue || own.order || claimed.status !== "claimed") return undefined;
  return `UPDATE ${names.records} SET carried = ${literal(own.carried)}
    WHERE id = ${literal(claimed.id)} AND owner = ${literal(claimed.owner)} AND state = 'processing'`;
}

/**
 * The failed attempt, written after the rollback. The caller's own record may not exist any more
 * (its first claim rolled back with the rest), so it is written whole; a waiting notification's row is kept and
 * only marked failed.
 */
export async function recordFailedRun(
  { db, claims, settles }: Pick<InboxStatements, "db" | "claims" | "settles">,
  claimed: ClaimedOrStale,
  own: ClaimFlags | undefined,
  error: string,
): Promise<void> {
  const lock = claims.lockPrefix + claimed.id;
  const write =
    own && own.id === claimed.id
      ? ([
          settles.failAfterRollback,
          [
            lock,
            own.id,
            own.order?.key ?? null,
            own.order?.position ?? null,
            own.fingerprint,
            own.owner,
            listedAsOf(own)?.eventType ?? null,
            listedAsOf(own)?.subscriptionId ?? null,
          ],
        ] as const)
      : ([settles.failInLaneAfterRollback, [lock, claimed.id, claimed.owner]] as const);
  await db.withClient((q) => q(write[0], [...write[1], claimed.attempt, error])).catch(() => {});
}

/** What the completion writes: the claim's own row, or a first claim's record whole (its fingerprint, where it is listed). */
export const completedWrite = ({ rowId, unwritten }: WrittenRow, own: ClaimFlags | undefined): CompletedWrite =>
  unwritten ? { fingerprint: own?.fingerprint, ...(own && listedAsOf(own)) } : { rowId, fingerprint: undefined };

/**
 * The completion's statement, without the COMMIT: the seal alone for a record its claim wrote completed
 * with this very answer, the completion procedure for any other (which rewrites such a record's answer).
 */
export function completion(
  settles: SettleStatements,
  claimed: ClaimedOrStale,
  answer: StoredAnswer,
  written: WrittenRow,
  own: ClaimFlags | undefined,
): string {
  const answerJson = JSON.stringify(answer);
  if (written.completed && written.rowId !== undefined && answerJson === FIRST_ANSWER)
    return (written.prepared ? settles.sealExecute : settles.sealCall)(claimed.id, claimed.owner, written.rowId);
  return settles.completeCall(claimed.id, claimed.owner, answerJson, completedWrite(written, own));
}
