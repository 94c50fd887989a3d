import { type ClaimFlags, claimFlags } from "../idempotency/claim-flags.js";
import type { ClaimedOrStale, ClaimRequest, ClaimResult, StoredAnswer } from "../idempotency/store.js";
import { StoreUnavailableError } from "../idempotency/store.js";
import type { TransactionalClaim } from "../idempotency/transaction.js";
import { withinCoarseLimit } from "../shared/coarse-clock.js";
import { withTimeout } from "../shared/time-limit.js";
import {
  claimIn,
  KEY_LOCK_WAIT_MS,
  lockWaitFor,
  lookInline,
  parseLook,
  takeNextIn,
  type WrittenRow,
} from "./claim-sql.js";
import { fenceCall, SEAL_SETTING, sealedCommit } from "./fence-sql.js";
import {
  type FirstClaimStatement,
  firstClaimExecute,
  firstClaimStatement,
  firstClaimValues,
  lockedReadSql,
} from "./first-claim-sql.js";
import { TransactionClosedError } from "./guarded-transaction.js";
import {
  type GateSwitch,
  type OrmTransaction,
  type OrmTransactions,
  statementGate,
  type TransactionExecutor,
} from "./orm-transaction.js";
import { prepareFirst, prepareMissing, recountPrepared } from "./prepared.js";
import { type Query, retryConflicts } from "./sessions.js";
import {
  completion,
  defersFirstWrite,
  HANDLER_SAVEPOINT,
  type InboxStatements,
  recordFailedRun,
  serverBound,
  writeFirstRecord,
} from "./transactional-claim.js";

/**
 * Claims in a transaction the merchant's ORM opens (`postgresStore({ orm })`): the same claim, fence
 * and completion as `transactionalClaim`, sent one statement at a time through the ORM's executor;
 * the ORM begins and commits (or rolls back) the transaction, as its own `transaction(cb)` does, and
 * the handler writes with the ORM's transaction object. The callback stays open while the handler
 * runs: the store lets it return (commit) or throws from it (roll back) once the run is decided.
 */
export function ormClaims(inbox: InboxStatements, orm: OrmTransactions<unknown>) {
  const isolation = isolationSetting(inbox.db.isolationLevel);
  // The first claim as the default store's, also telling the backend and the level (see firstClaimStatement).
  const firstClaim = firstClaimStatement(inbox.names, inbox.claims.retentionSeconds, true);
  return {
    claimInTransaction: async (asked: ClaimRequest): Promise<TransactionalClaim> => {
      const request = claimFlags(asked);
      const deferWrite = defersFirstWrite(inbox.db, request);
      const opened = await openInOrm(
        inbox,
        orm,
        lockWaitFor(request),
        request.handlerTimeoutMs,
        async (query, bound, written, connection) => {
          // The level the transaction runs at, read with the claim: a `SET TRANSACTION` is sent only once
          // a transaction of this ORM was found at another level (see isolationSetting).
          const [looked] = deferWrite
            ? await firstClaimIn(inbox, firstClaim, query, connection, request, bound)
            : await query<SessionLook>(
                `SELECT look, pg_backend_pid() AS pid, current_setting('transaction_isolation') AS isolation FROM (${lookInline(inbox.claims, request, bound, false)}) AS claim`,
              );
          isolation.check(looked!.isolation);
          written.prepared = deferWrite && connection !== undefined;
          let look = parseLook(looked!.look);
          if (look.unread) {
            // The lock taken, the record not read after it (see firstClaimStatement): the fence up, then read.
            await query(fenceCall(inbox.names, request.owner));
            const [read] = await query<{ look: string }>(
              lockedReadSql(inbox.names, inbox.claims.retentionSeconds, request),
            );
            look = parseLook(read!.look);
          }
          const result = await claimIn(query, inbox.claims, request, written, look, deferWrite);
          return { result, pid: looked!.pid };
        },
        request.owner,
        isolation,
      );
      return ormClaim(inbox, opened, request);
    },
    takeNextInTransaction: async (
      order: { key: string },
      owner: string,
      leaseMs: number,
      handlerTimeoutMs?: number,
    ): Promise<TransactionalClaim | undefined> => {
      const opened = await openInOrm(
        inbox,
        orm,
        KEY_LOCK_WAIT_MS,
        handlerTimeoutMs,
        async (query, bound) => {
          if (bound !== undefined)
            await query(
              "SELECT set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $1, true)",
              [String(bound)],
            );
          // The fence goes up first: a waiting notification's handler runs in this transaction.
          const [fenced] = await query<{ pid: number }>(`${fenceCall(inbox.names, owner)}, pg_backend_pid() AS pid`);
          return { result: await takeNextIn(query, inbox.claims, order.key, owner, leaseMs), pid: fenced!.pid };
        },
        owner,
        ALWAYS_SET,
      );
      return opened.result === undefined ? undefined : ormClaim(inbox, opened, undefined);
    },
  };
}

/** The claim's first answer in an ORM's transaction: the claim's, its backend, its level. */
interface SessionLook {
  look: string;
  pid: number;
  isolation: string;
}

/**
 * A first delivery's claim (or a duplicate's) in plain statements, as the default store's
 * (firstClaimStatement). On a connection the adapter names (`OrmTransaction.connection`), prepared
 * with the seal, in a statement of their own the first time on that connection (the ORM's `BEGIN` went
 * before, and an executor answers one statement's rows), then run by name; without one, the
 * statement's text with its parameters, planned by the server each time (so too with preparing off). Where the server finds the
 * claim's statement gone (a handler's `DEALLOCATE`), the transaction ran nothing of the claim's: it is
 * rolled back, the count put right, and the claim made again (`ClaimAgain`).
 */
async function firstClaimIn(
  inbox: InboxStatements,
  firstClaim: FirstClaimStatement,
  query: Query,
  connection: object | undefined,
  request: ClaimRequest,
  bound: number | undefined,
): Promise<SessionLook[]> {
  // Preparing off (`preparedStatements: false`, or a pooler found by the store's own claims): as text.
  if (connection === undefined || !inbox.prepared.enabled)
    return query<SessionLook>(firstClaim.text, firstClaimValues(inbox.names, request, bound));
  const statements = [firstClaim, inbox.settles.seal];
  try {
    // New to this process, the connection may hold them still (an adapter's object for it made anew).
    if (prepareFirst(connection, statements)) await query(prepareMissing(statements));
    return await query<SessionLook>(firstClaimExecute(firstClaim, inbox.names, request, bound));
  } catch (err) {
    if (recountPrepared(connection, statements, err, 0)) throw new ClaimAgain();
    throw err;
  }
}

/**
 * Whether the store's isolation level must be set on an ORM's transaction (`SET TRANSACTION`, a round
 * trip of its own): not while the transactions the ORM opens are found at that level already (the
 * server's default `read committed`, usually), which the claim reads as it runs. A claim that finds
 * another level is rolled back before anything of it is decided on (`IsolationMismatch`) and claimed
 * again, and from then on every transaction of this store is set first.
 */
interface IsolationSetting {
  /** Whether the next transaction is set first. */
  readonly set: boolean;
  /** The claim's transaction ran at `found` (`current_setting('transaction_isolation')`): refused if not the store's. */
  check(found: string): void;
}

function isolationSetting(level: string): IsolationSetting {
  let set = false;
  return {
    get set() {
      return set;
    },
    check(found) {
      if (found === level) return;
      set = true;
      throw new IsolationMismatch();
    },
  };
}

/** Thrown from the ORM's callback for a claim that decided nothing: its transaction rolled back, it is made again. */
class ClaimAgain extends Error {}

/** Thrown from the ORM's callback when its transaction is not at the store's level: rolled back, claimed again. */
class IsolationMismatch extends ClaimAgain {}

/** A claim to make again as the ORM passed it on: as thrown, or as the cause of an error of its own. */
const isMismatch = (err: unknown) =>
  err instanceof ClaimAgain || (err as { cause?: unknown } | undefined)?.cause instanceof ClaimAgain;

/** Tries of one claim: found at another level once, and its prepared statements found missing once. */
const CLAIM_TRIES = 3;

/** For a claim whose first statement cannot read the level: always set. */
const ALWAYS_SET: IsolationSetting = { set: true, check: () => {} };

/** How the run ends inside the ORM's callback: statements to send before it returns, or a rollback. */
type Ending = ((query: Query) => Promise<void>) | "rollback";

/** Thrown from the ORM's callback to make the ORM roll the transaction back; never seen outside. */
const ROLL_BACK = new Error("the run is rolled back");

interface Opened {
  result: ClaimResult | undefined;
  /** Present while the transaction stays open for a handler. */
  open?: {
    transaction: OrmTransaction<unknown>;
    query: Query;
    pid: number | undefined;
    written: WrittenRow;
    /** Let the ORM's callback go on to its end; settles as the ORM's transaction does. */
    end(ending: Ending): Promise<void>;
    /** Whether the store's last statement carries the `COMMIT` (the adapter answers the ORM's own: `answersEnd`). */
    commitsItself: boolean;
    gate: GateSwitch;
  };
}

type ClaimStep = (
  query: Query,
  bound: number | undefined,
  written: WrittenRow,
  connection: object | undefined,
) => Promise<{ result: ClaimResult | undefined; pid: number | undefined }>;

const runs = (result: ClaimResult | undefined): result is ClaimedOrStale =>
  result?.status === "claimed" || result?.status === "stale";

/** Open the ORM's transaction and claim in it; a conflict while claiming rolls it back and claims again. */
function openInOrm(
  inbox: InboxStatements,
  orm: OrmTransactions<unknown>,
  lockWaitMs: number | undefined,
  handlerTimeoutMs: number | undefined,
  claim: ClaimStep,
  token: string,
  isolation: IsolationSetting,
): Promise<Opened> {
  const { db } = inbox;
  const bound = serverBound(db, handlerTimeoutMs);
  const attempt = (tries: number): Promise<Opened> =>
    openOnce(inbox, orm, lockWaitMs, bound, claim, token, isolation).catch((err: unknown) => {
      // Found at another level, the claim runs again with the level set (see isolationSetting); its
      // statements found missing, again with them prepared (see firstClaimIn).
      if (!isMismatch(err)) throw err;
      if (tries < CLAIM_TRIES) return attempt(tries + 1);
      throw inbox.db.unavailable(err);
    });
  return retryConflicts(() => attempt(1));
}

/** One try: the ORM's transaction opened, claimed in, and kept open for the handler or ended. */
function openOnce(
  inbox: InboxStatements,
  orm: OrmTransactions<unknown>,
  lockWaitMs: number | undefined,
  bound: number | undefined,
  claim: ClaimStep,
  token: string,
  isolation: IsolationSetting,
): Promise<Opened> {
  const { db } = inbox;
  return (async () => {
    const gate = statementGate();
    let over = false;
    let givenUp = false;
    let opened: (value: Opened) => void = () => {};
    const claimed = new Promise<Opened>((resolve) => {
      opened = resolve;
    });
    let finish: (ending: Ending) => void = () => {};
    const decided = new Promise<Ending>((resolve) => {
      finish = resolve;
    });
    const claimAndRun = async (transaction: OrmTransaction<unknown>): Promise<Opened | undefined> => {
      const query = executorQuery(transaction.executor, () => over, db.timeoutMs);
      // The store's isolation level, whatever the ORM's default: the claim is decided as every claim is.
      if (isolation.set) await query(`SET TRANSACTION ISOLATION LEVEL ${db.isolationLevel.toUpperCase()}`);
      if (lockWaitMs !== undefined)
        await query("SELECT set_config('lock_timeout', $1, true)", [String(Math.max(1, Math.round(lockWaitMs)))]);
      const written: WrittenRow = {};
      const { result, pid } = await claim(query, bound, written, transaction.connection);
      if (givenUp) throw ROLL_BACK;
      if (!runs(result)) {
        // Not run here: whatever the claim wrote commits, past the fence it may have put up, and
        // the answer is given once the ORM has committed it (or the store, in the same message).
        await sealed(query, gate.committed, transaction.answersEnd === true, token);
        return { result };
      }
      // The handler's own statements wait for locks as the merchant's database is set to.
      if (lockWaitMs !== undefined) await query("RESET lock_timeout");
      const end = (ending: Ending) => {
        gate.ending();
        finish(ending);
        return done.then(() => undefined);
      };
      const commitsItself = transaction.answersEnd === true;
      opened({ result, open: { transaction, query, pid, written, end, commitsItself, gate } });
      const ending = await decided;
      if (ending === "rollback") throw ROLL_BACK;
      await ending(query);
      return undefined;
    };
    const done = orm
      // However the callback ends, the ORM's own COMMIT or ROLLBACK after it passes the gate.
      .run(gate.gate, (transaction) => claimAndRun(transaction).finally(gate.ending))
      .finally(() => {
        over = true;
        gate.close();
      });
    // The claim's answer when it is not run (the ORM committed it), or its failure (or the ORM's) when
    // the transaction ended before it opened; a run's transaction, opened, settles later.
    const ended = done.then((notRun) => notRun ?? new Promise<never>(() => {}));
    try {
      return await withinCoarseLimit(
        Promise.race([claimed, ended]),
        db.timeoutMs,
        () => new StoreUnavailableError(`PostgreSQL did not answer a claim within ${db.timeoutMs} ms`),
      );
    } catch (err) {
      givenUp = true;
      // A transaction opened late is rolled back by the callback itself; one open now ends here.
      finish("rollback");
      done.catch(() => {});
      throw isMismatch(err) ? err : db.unavailable(err);
    }
  })();
}

/**
 * The library's own end of a claim's transaction: sealed with `token` (see fence-sql.ts), then
 * committed by the ORM, or here in the same message when the adapter answers the ORM's `COMMIT`
 * itself (`answersEnd`), one round trip fewer.
 */
async function sealed(query: Query, committed: () => void, commitsItself: boolean, token: string): Promise<void> {
  if (!commitsItself) return void (await query("SELECT set_config($1, $2, true)", [SEAL_SETTING, token]));
  await query(sealedCommit(token));
  committed();
}

/**
 * The executor's statements as the claim code sends them, each within the store's time limit, and
 * refused once the ORM's transaction is over (its connection may be another transaction's by then).
 */
function executorQuery(executor: TransactionExecutor, over: () => boolean, timeoutMs: number): Query {
  const late = () => new StoreUnavailableError(`PostgreSQL did not answer a statement within ${timeoutMs} ms`);
  return async <R>(text: string, values: unknown[] = []) => {
    if (over()) throw new TransactionClosedError();
    const { rows } = await withinCoarseLimit(executor.query(text, values), timeoutMs, late);
    return rows as R[];
  };
}

/** The claim to run in the ORM's open transaction: the handler's handle, and how the run ends. */
function ormClaim(inbox: InboxStatements, opened: Opened, own: ClaimFlags | undefined): TransactionalClaim {
  const over = async () => {};
  if (!opened.open)
    return { result: opened.result!, transaction: undefined, commit: over, rollback: over, detach: over };
  const claimed = opened.result as ClaimedOrStale;
  const { transaction, query, pid, written, end, commitsItself, gate } = opened.open;
  const { db, settles, claims, canceller } = inbox;
  let ended = false;
  const once = () => {
    const first = !ended;
    ended = true;
    return first;
  };

  /**
   * Roll back through the ORM. A timed-out handler may still be running a statement: it is cancelled
   * on the server first, so the ORM's rollback does not queue behind it; a rollback still held up is
   * cancelled late (the connection is the ORM's to drop, not the store's).
   */
  async function rollBack(cancelFirst: boolean): Promise<void> {
    if (cancelFirst && pid !== undefined) await canceller.cancel(pid);
    const rolledBack = end("rollback").then(
      () => true,
      () => true,
    );
    const within = () =>
      withTimeout(rolledBack, db.timeoutMs, () => new Error("rollback took too long")).catch(() => false);
    if (!(await within()) && !cancelFirst && pid !== undefined) {
      await canceller.cancel(pid);
      await within();
    }
  }

  /**
   * `failWithin`: the handler's writes rolled back to the savepoint, `settle` run, the record failed (its
   * key let go of, a dead letter of a lane that holds kept at its head: see `lanes.fail`) and committed:
   * true (the failure recorded after the ORM's rollback if that commit failed). False when the record
   * could not be failed here: the caller rolls everything back and records it as any failure.
   */
  async function failedInTransaction(
    error: string,
    settle: ((transaction: unknown) => Promise<void>) | undefined,
  ): Promise<boolean> {
    try {
      // No `settle`: no handler ran, and there is nothing to roll back to (see `TransactionalClaim.failWithin`).
      if (settle) {
        // A timed-out handler may still be running a statement: cancelled first, not queued behind.
        if (error === "handler_timeout" && pid !== undefined) await canceller.cancel(pid);
        await query(`ROLLBACK TO SAVEPOINT ${HANDLER_SAVEPOINT}`);
        await settle(transaction.handle);
      }
      const [marked] = await query<{ n: number }>(settles.failInLane, [claimed.id, claimed.owner, error]);
      if (marked!.n !== 1) return false;
    } catch {
      return false;
    }
    try {
      await end((q) => sealed(q, gate.committed, commitsItself, claimed.owner));
    } catch {
      // The ORM rolled back: nothing of it stands, and the failure is recorded as any other.
      await recordFailedRun(inbox, claimed, own, error);
    }
    return true;
  }

  return {
    result: claimed,
    transaction: transaction.handle,
    async commit(answer: StoredAnswer) {
      if (!once()) return;
      const statement = completion(settles, claimed, answer, written, own);
      try {
        // The completion seals the transaction (see fence-sql.ts): the ORM's COMMIT then passes the fence.
        await end(async (q) => {
          if (!commitsItself) return void (await q(statement));
          // The completion and the COMMIT, one message, as the default store sends them.
          await q(`${statement}; COMMIT`);
          gate.committed();
        });
      } catch (err) {
        // The ORM rolled back (a statement the handler broke, a lost connection): nothing committed.
        await recordFailedRun(inbox, claimed, own, "commit_failed");
        throw err;
      }
    },
    async detach() {
      if (!once()) return;
      try {
        // Handed to a queue, the claim commits as processing, under its lease.
        await end(async (q) => {
          await writeFirstRecord(q, claims, written, own);
          await sealed(q, gate.committed, commitsItself, claimed.owner);
        });
      } catch (err) {
        throw db.unavailable(err);
      }
    },
    async discard() {
      if (!once()) return;
      await rollBack(false);
    },
    async countAttempt(attempt) {
      await query(settles.setAttempt, [claimed.id, claimed.owner, attempt]);
      claimed.attempt = attempt;
    },
    async savepoint() {
      await query(`SAVEPOINT ${HANDLER_SAVEPOINT}`);
    },
    // A lane's failed run back at its place in its key's lane, in this transaction, as the
    // default store does (see transactional-claim.ts): the key stays held, nothing later of it runs first.
    async requeueInLane(attempt, error, retry) {
      if (!once()) return false;
      let retryInMs: number | undefined;
      try {
        // A timed-out handler may still be running a statement: cancelled first, not queued behind.
        if (error === "handler_timeout" && pid !== undefined) await canceller.cancel(pid);
        await query(`ROLLBACK TO SAVEPOINT ${HANDLER_SAVEPOINT}`);
        retryInMs = await retry(transaction.handle);
        if (retryInMs !== undefined) {
          const values = [claimed.id, claimed.owner, attempt, error, retryInMs];
          const [kept] = await query<{ n: number }>(settles.requeueInLane, values);
          if (kept!.n !== 1) retryInMs = undefined;
        }
      } catch {
        retryInMs = undefined;
      }
      if (retryInMs !== undefined) {
        try {
          await end((q) => sealed(q, gate.committed, commitsItself, claimed.owner));
          return true;
        } catch {
          // The ORM rolled back: nothing of it stands, and the failure is recorded as any other.
          await recordFailedRun(inbox, claimed, own, error);
          return false;
        }
      }
      await rollBack(false);
      await recordFailedRun(inbox, claimed, own, error);
      return false;
    },
    async failWithin(error, settle) {
      if (!once()) return false;
      if (await failedInTransaction(error, settle)) return true;
      await rollBack(false);
      await recordFailedRun(inbox, claimed, own, error);
      return false;
    },
    async rollback(error) {
      if (!once()) return;
      await rollBack(error === "handler_timeout");
      await recordFailedRun(inbox, claimed, own, error);
    },
  };
}
