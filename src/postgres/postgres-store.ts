import type { Pool } from "pg";
import { claimFlags } from "../idempotency/claim-flags.js";
import {
  type ClaimHandle,
  type ClaimRequest,
  DEFAULT_LEASE_MS,
  DEFAULT_RETENTION_SECONDS,
  type LaneStore,
  refOf,
} from "../idempotency/store.js";
import type { TransactionalClaim, TransactionalStore } from "../idempotency/transaction.js";
import { coded, optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { backendCanceller } from "./cancel-backend.js";
import {
  claimIn,
  claimStatements,
  KEY_LOCK_WAIT_MS,
  lockWaitFor,
  type RecordRow,
  recordOf,
  takeNextIn,
} from "./claim-sql.js";
import { poolConnection } from "./connection-state.js";
import { firstClaimStatement } from "./first-claim-sql.js";
import { keptStatements } from "./kept-sql.js";
import { listIn, listStatements } from "./list-sql.js";
import { qualifiedNames, type TableNames } from "./names.js";
import { ormClaims } from "./orm-claim.js";
import type { OrmTransactions } from "./orm-transaction.js";
import { SchemaTooNewError, versionChecked } from "./schema-version.js";
import {
  ISOLATION_LEVELS,
  type IsolationLevel,
  LOCK_NOT_AVAILABLE,
  MissingTableError,
  retryConflicts,
  sessions,
  sqlState,
} from "./sessions.js";
import { settleStatements } from "./settle-sql.js";
import { transactionalClaim, transactionalTakeNext } from "./transactional-claim.js";

export const DEFAULT_POSTGRES_TIMEOUT_MS = 5_000;

export interface PostgresStoreOptions extends TableNames {
  /** A node-postgres pool; the store checks clients out of it and never ends it (close it yourself). */
  connection: Pool;
  /** Lease of a claim made outside a handler's transaction (queued notifications). Default 30 s. */
  leaseMs?: number;
  /** How long a record is kept after its last change before it counts as gone (see `purge`). Default 7 days. */
  retentionSeconds?: number;
  /** Limit on a connection check-out and on each statement; past it the store is unavailable (503). Default 5 s. */
  timeoutMs?: number;
  /**
   * The isolation level every transaction of the store begins with, whatever the database's default.
   * Default `read committed`. Serialization failures and deadlocks while claiming are retried a few times.
   */
  isolationLevel?: IsolationLevel;
  /**
   * Open each handler's transaction through the merchant's ORM (`knexTransactions(knex)` from
   * `merchant-webhooks/postgres/knex`, `typeormTransactions(dataSource)` from
   * `merchant-webhooks/postgres/typeorm`, or `ormTransactions(...)` for another): `ctx.transaction` is
   * then the ORM's own transaction object. Default: a pg client from `connection`.
   */
  orm?: OrmTransactions<any>;
}

const POSTGRES_STORE_KEYS = {
  connection: true,
  schema: true,
  table: true,
  leaseMs: true,
  retentionSeconds: true,
  timeoutMs: true,
  isolationLevel: true,
  orm: true,
} as const satisfies KnownKeys<PostgresStoreOptions>;

export type PostgresStore = TransactionalStore & {
  readonly leaseMs: number;
  /** The ORM its handlers' transactions are opened through (`orm`); none when they are the store's own. */
  readonly orm?: OrmTransactions<unknown>;
  /** Its lanes: each notification keeps its own job; the next one is taken on, and a dead letter may hold a lane. */
  readonly lanes: LaneStore;
};

/**
 * The idempotency store on PostgreSQL: a transactional inbox. A receiver running a handler with it
 * claims the notification in a transaction, hands the handler that transaction (`ctx.transaction`),
 * and commits the completed record with the handler's writes, so the effect and the record are
 * stored together or not at all. Queued notifications use the plain store methods, one short
 * statement each. The tables come from `migrate()`; the store never creates them.
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  rejectUnknownKeys("postgresStore", options, Object.keys(POSTGRES_STORE_KEYS));
  const pool = options?.connection;
  if (!pool || typeof (pool as Partial<Pool>).connect !== "function")
    throw coded(
      new TypeError("postgresStore: `connection` must be a pg.Pool (new pg.Pool({ connectionString }))"),
      "MW_CONNECTION_INVALID",
    );
  const leaseMs = positive("leaseMs", options.leaseMs ?? DEFAULT_LEASE_MS);
  const retentionSeconds = positive("retentionSeconds", options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS);
  const timeoutMs = positive("timeoutMs", options.timeoutMs ?? DEFAULT_POSTGRES_TIMEOUT_MS);
  const isolationLevel = options.isolationLevel ?? "read committed";
  if (!ISOLATION_LEVELS.includes(isolationLevel))
    throw optionError(
      new TypeError(
        `postgresStore: isolationLevel must be one of ${ISOLATION_LEVELS.map((level) => `"${level}"`).join(", ")}`,
      ),
      "MW_INVALID_OPTION",
      "isolationLevel",
    );
  const names = qualifiedNames(options);
  const claims = claimStatements(names, retentionSeconds);
  const settles = settleStatements(names, retentionSeconds);
  const connection = poolConnection(
    pool,
    () => ping(),
    (err) => (err instanceof MissingTableError || err instanceof SchemaTooNewError ? err.message : undefined),
  );
  const db = versionChecked(sessions(pool, names, { timeoutMs, isolationLevel }, connection), names);
  const firstClaim = firstClaimStatement(names, retentionSeconds);
  const inbox = { db, names, claims, firstClaim, settles, canceller: backendCanceller(pool, timeoutMs) };
  const listSql = listStatements(names, retentionSeconds);
  const keptSql = keptStatements(names, retentionSeconds);
  const inOrm = options.orm && ormClaims(inbox, options.orm);
  // Also proves the table is there: a store that would fail every claim is not healthy.
  const ping = async () => {
    // Every client busy, the last statement answered: the server is up and the pool saturated, which is
    // not an outage (a check-out would wait behind the handlers and miss the health check's limit).
    const max = (pool as Pool & { options?: { max?: number } }).options?.max ?? 10;
    if (pool.idleCount === 0 && pool.totalCount >= max && connection.state().state === "up") return;
    await db.withClient(async (query) => void (await query(`SELECT 1 FROM ${names.records} LIMIT 0`)));
  };

  // One statement each, at the session's default isolation: where that is serializable, a conflict is retried.
  const settle = (statement: string, { id, owner }: ClaimHandle, extra: unknown[] = []) =>
    retryConflicts(() =>
      db.withClient(async (query) => (await query<{ n: number }>(statement, [id, owner, ...extra]))[0]!.n > 0),
    );

  return {
    leaseMs,
    ...(options.orm ? { orm: options.orm } : {}),
    claim(asked: ClaimRequest) {
      const request = claimFlags(asked);
      return db.inTransaction(lockWaitFor(request), (query) => claimIn(query, claims, request));
    },
    extend: (claim, ms = leaseMs) => settle(settles.extend, claim, [ms]),
    complete: (claim, answer) => settle(settles.complete, claim, [JSON.stringify(answer)]),
    fail: (claim, error) => settle(settles.fail, claim, [error]),
    async markQueued(claim) {
      if (await settle(settles.markQueued, claim)) return true;
      // Skipped, the row may be locked by a worker's claim that only looked at it (its job came before
      // this mark, and its lane was held or busy) and lets go at once: unmarked, the record would stay
      // processing under a lapsed lease, and its lane would drop it. The mark waits a moment for such a
      // look; a worker that took the claim over holds the row for its run, and the wait gives up.
      return retryConflicts(() =>
        db.inTransaction(KEY_LOCK_WAIT_MS, async (query) => {
          try {
            return (await query<{ n: number }>(settles.markQueuedLocked, [claim.id, claim.owner]))[0]!.n > 0;
          } catch (err) {
            if (sqlState(err) === LOCK_NOT_AVAILABLE) return false;
            throw err;
          }
        }),
      );
    },
    release: (claim) => settle(settles.release, claim),
    // An in-process queue's notifications, kept in their records' rows (see kept-sql.ts).
    kept: {
      lapsed: (limit) =>
        db.withClient(async (query) => (await query<{ id: string }>(keptSql.lapsed, [limit])).map((row) => row.id)),
      keep: (claim, data) =>
        retryConflicts(() =>
          db.withClient(async (query) => (await query(keptSql.keep, [claim.id, claim.owner, data])).length > 0),
        ),
      resume: (id, owner, lease) =>
        retryConflicts(() =>
          db.withClient(async (query) => {
            const [row] = await query<{ attempts: number; carried: string }>(keptSql.resume, [id, owner, lease]);
            return row && { claim: { id, owner }, attempt: row.attempts, carried: row.carried };
          }),
        ),
      rerun: (id, owner) =>
        retryConflicts(() => db.withClient(async (query) => (await query(keptSql.rerun, [id, owner])).length > 0)),
      redrivable: (id) => db.withClient(async (query) => (await query(keptSql.redrivable, [id])).length > 0),
    },
    lanes: {
      takeNext: (order, owner, ms) =>
        db.inTransaction(KEY_LOCK_WAIT_MS, (query) => takeNextIn(query, claims, order.key, owner, ms)),
      heldBy: (order) =>
        db.withClient(async (query) => (await query<{ id: string }>(claims.waiting.heldBy, [order.key]))[0]?.id),
      heldLanes: () =>
        db.withClient(async (query) => {
          const [row] = await query<HeldLanesRow>(claims.waiting.heldLanes);
          return row!.order_key === null
            ? { count: row!.lanes }
            : { count: row!.lanes, oldest: { key: row!.order_key, id: row!.id!, since: Math.round(row!.since_ms!) } };
        }),
    },
    get: (ref) =>
      db.withClient(async (query) => {
        const [row] = await query<RecordRow>(claims.get, [refOf(ref).id]);
        return row && recordOf(row);
      }),
    list: (request) => db.withClient((query) => listIn(query, listSql, request)),
    claimInTransaction: (request: ClaimRequest): Promise<TransactionalClaim> =>
      inOrm ? inOrm.claimInTransaction(request) : transactionalClaim(inbox, request),
    takeNextInTransaction: (order, owner, ms, handlerTimeoutMs) =>
      inOrm
        ? inOrm.takeNextInTransaction(order, owner, ms, handlerTimeoutMs)
        : transactionalTakeNext(inbox, order.key, owner, ms, handlerTimeoutMs),
    ping,
    connection: {
      address: connection.address,
      state: connection.state,
      watch: connection.watch,
      settled: connection.settled,
    },
    // The pool is the caller's: other code may share it, so it is theirs to end.
    close() {},
  };
}

function positive(name: string, value: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
    throw optionError(
      new TypeError(
        `postgresStore: ${name} must be a positive number of ${name === "retentionSeconds" ? "seconds" : "milliseconds"}`,
      ),
      "MW_INVALID_TIMEOUT",
      name,
    );
  return value;
}

/** `heldLanes`' one row: the count, and the lane held longest (none when no lane is held). */
interface HeldLanesRow {
  lanes: number;
  order_key: string | null;
  id: string | null;
  since_ms: number | null;
}
