import type { Pool, PoolClient, QueryResult, QueryResultRow } from "pg";
import { StoreUnavailableError } from "../idempotency/store.js";
import { clockFor, withinCoarseLimit } from "../shared/coarse-clock.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import type { ConnectionReports } from "./connection-state.js";
import { migrateCallFor, type QualifiedNames } from "./names.js";

/** A pg client's `query`, narrowed to what the store calls. */
export type Query = <R extends QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

/** Thrown when the inbox tables are missing: the store never creates them on its own. */
export class MissingTableError extends MerchantWebhooksError {
  override name = "MissingTableError";
  constructor(message: string) {
    super("MW_MISSING_TABLE", message);
  }
}

export const UNDEFINED_TABLE = "42P01";
export const INVALID_SCHEMA = "3F000";
const UNDEFINED_FUNCTION = "42883";
export const LOCK_NOT_AVAILABLE = "55P03";

/** The SQLSTATE of an error the server sent (a pg DatabaseError has a severity); undefined for socket errors. */
export const sqlState = (err: unknown): string | undefined => {
  if (typeof err !== "object" || err === null) return undefined;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === "string" && typeof severity === "string" ? code : undefined;
};

/** The isolation levels a store's transactions may begin with (`isolationLevel`). */
export const ISOLATION_LEVELS = ["read committed", "repeatable read", "serializable"] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

const SERIALIZATION_FAILURE = "40001";
const DEADLOCK_DETECTED = "40P01";
/** How many times a claim's transaction is run again after a serialization failure or a deadlock. */
export const CONFLICT_RETRIES = 8;

/** A serialization failure or a deadlock: the transaction was rolled back and may simply run again. */
export const isConflict = (err: unknown) => {
  const state = sqlState(err);
  return state === SERIALIZATION_FAILURE || state === DEADLOCK_DETECTED;
};

export interface SessionSettings {
  timeoutMs: number;
  isolationLevel: IsolationLevel;
}

/**
 * Checked-out clients with a time limit on the check-out and on every statement (up to a tenth later:
 * each limit is watched on one shared clock, not a timer per statement). A client whose
 * statement ran out of time, or that failed for any reason but a plain SQL error, is destroyed rather
 * than returned to the pool: it may still be running that statement, or be inside a transaction.
 * Every checked-out client has an `error` listener while the store holds it: pg emits a dropped
 * connection (terminated backend, restart, failover) on the client, and the pool listens only to the
 * clients it holds idle, so an unheard error would end the process with every request in flight.
 */
export function sessions(pool: Pool, names: QualifiedNames, settings: SessionSettings, reports: ConnectionReports) {
  const { timeoutMs, isolationLevel } = settings;
  const late = (what: string) => () =>
    new StoreUnavailableError(`PostgreSQL did not answer ${what} within ${timeoutMs} ms`);
  /** Clients whose connection reported an error: never given back to the pool as healthy. */
  const broken = new WeakSet<PoolClient>();
  const listeners = new WeakMap<PoolClient, (err: Error) => void>();

  function unavailable(err: unknown): Error {
    if (err instanceof MissingTableError) return err;
    if (err instanceof StoreUnavailableError) {
      if (!(err instanceof PoolExhaustedError)) reports.unreachable(err.message);
      return err;
    }
    const state = sqlState(err);
    const migrateCall = migrateCallFor(names);
    if (state === UNDEFINED_TABLE || state === INVALID_SCHEMA) {
      reports.answered();
      return new MissingTableError(
        `the inbox table ${names.records} does not exist: run ${migrateCall} once before receiving`,
      );
    }
    const missing = state === UNDEFINED_FUNCTION && ownFunctionIn(names, (err as Error).message);
    if (missing) {
      reports.answered();
      return new MissingTableError(
        `the inbox function ${missing} does not exist: run ${migrateCall}, which creates the tables and installs the functions the store calls (tables made by an older version of merchant-webhooks lack them)`,
      );
    }
    // A SQL error is an answer; anything else (refused, reset, timed out) means the server is out of reach.
    if (state === undefined) reports.unreachable((err as Error)?.message ?? String(err));
    else reports.answered();
    return new StoreUnavailableError(`PostgreSQL is unavailable: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }

  /**
   * A client from the pool with the store's `error` listener on it, attached in pg's own callback,
   * as it hands the client over. A promise would leave it unheard until the check-out's continuation
   * runs, and a backend terminated as it becomes ready sends its FATAL in the very read that carries
   * its ReadyForQuery: pg emits that error before any continuation could attach a listener. A client
   * that arrives after the time limit goes back to the pool unused.
   */
  const checkOut = (givenUp: () => boolean) =>
    new Promise<PoolClient>((resolve, reject) => {
      pool.connect((err, client) => {
        if (err || !client) return reject(err ?? new Error("the pool gave no client"));
        hear(client);
        if (givenUp()) release(client);
        else resolve(client);
      });
    });

  function hear(client: PoolClient): void {
    const heard = (err: Error) => {
      broken.add(client);
      // The server said why (terminated, shutting down): it answers. A socket error: out of reach.
      if (sqlState(err) === undefined) reports.unreachable(err.message);
    };
    client.on("error", heard);
    listeners.set(client, heard);
  }

  const lateConnection = late("a connection");

  async function connect(): Promise<PoolClient> {
    let gaveUp = false;
    try {
      const client = await withinCoarseLimit(
        checkOut(() => gaveUp),
        timeoutMs,
        () => {
          gaveUp = true;
          return lateConnection();
        },
      );
      reports.answered();
      return client;
    } catch (err) {
      gaveUp = true;
      // Every client busy, with the pool at its `max`: the server may well answer everything.
      const { totalCount, idleCount, waitingCount } = pool;
      const max = (pool as Pool & { options?: { max?: number } }).options?.max ?? 10;
      if (err instanceof StoreUnavailableError && totalCount >= max && idleCount === 0) {
        reports.exhausted(waitingCount);
        throw new PoolExhaustedError(waitingCount, timeoutMs);
      }
      throw unavailable(err);
    }
  }

  /**
   * Give a client back: to the pool when healthy, destroyed when `failure` is given or its connection
   * broke. A destroyed client keeps a listener, as its socket may still report its end.
   */
  function release(client: PoolClient, failure?: unknown): void {
    const destroy = failure !== undefined || broken.has(client);
    const heard = listeners.get(client);
    if (heard && !destroy) client.removeListener("error", heard);
    listeners.delete(client);
    client.release(
      destroy ? (failure instanceof Error ? failure : new Error(String(failure ?? "connection lost"))) : undefined,
    );
  }

  const lateStatement = late("a statement");
  const clock = clockFor(timeoutMs);

  /**
   * Rows of the statement; of a simple-protocol message of several statements, the last one's. pg's
   * callback form, and one promise: its promise form makes two more per statement, and a race a third.
   */
  const queryOn =
    (client: PoolClient): Query =>
    <R extends QueryResultRow>(text: string, values?: unknown[]) =>
      new Promise<R[]>((resolve, reject) => {
        const expire = () => reject(lateStatement());
        clock.watch(expire);
        client.query<R>(text, values ?? NO_VALUES, (err: Error | null, result: QueryResult<R> | QueryResult<R>[]) => {
          clock.unwatch(expire);
          if (err) reject(err);
          else resolve(Array.isArray(result) ? result[result.length - 1]!.rows : result.rows);
        });
      });

  /** Run `work` on one checked-out client, then give the client back (or destroy it, after a failure). */
  async function withClient<T>(work: (query: Query, client: PoolClient) => Promise<T>): Promise<T> {
    const client = await connect();
    try {
      const result = await work(queryOn(client), client);
      release(client);
      return result;
    } catch (err) {
      release(client, err);
      throw unavailable(err);
    }
  }

  /**
   * Run `work` in a transaction whose lock waits, if `lockWaitMs` is given, give up after it. A
   * serialization failure or deadlock runs it again, a bounded number of times.
   */
  function inTransaction<T>(lockWaitMs: number | undefined, work: (query: Query) => Promise<T>): Promise<T> {
    return retryConflicts(() =>
      withClient(async (query) => {
        await query(begin(isolationLevel, lockWaitMs));
        const result = await work(query);
        await query("COMMIT");
        return result;
      }),
    );
  }

  return { connect, release, queryOn, withClient, inTransaction, unavailable, isolationLevel, timeoutMs };
}

export type Sessions = ReturnType<typeof sessions>;

/** A statement's absent parameters, as pg reads them: sent with the simple protocol. Never changed. */
const NO_VALUES: unknown[] = [];

/** Every pooled client was busy past the time limit: the server is not down, the pool is full. */
export class PoolExhaustedError extends StoreUnavailableError {
  override name = "PoolExhaustedError";
  override readonly code = "MW_POOL_EXHAUSTED";
  constructor(waiting: number, timeoutMs: number) {
    super(`pool exhausted (${waiting} waiting): no client came free within ${timeoutMs} ms`);
  }
}

/**
 * Run `attempt` again after a serialization failure or a deadlock (the transaction was rolled back),
 * after a short random pause, at most `CONFLICT_RETRIES` times; then its error stands.
 */
export async function retryConflicts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (err) {
      const conflict = isConflict(err) || isConflict((err as { cause?: unknown })?.cause);
      if (!conflict || retry >= CONFLICT_RETRIES) throw err;
      // Random and growing, so the transactions that collided do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(250, 10 * 2 ** retry)));
    }
  }
}

/** Which of the store's functions an "undefined function" error names, if one. */
function ownFunctionIn(names: QualifiedNames, message: string): string | undefined {
  const unquoted = (name: string) => name.replaceAll('"', "");
  return [names.claimFunction, names.completeFunction, names.refuseFunction, names.fenceFunction].find((name) =>
    message.includes(unquoted(name)),
  );
}

/**
 * A string as a SQL literal, for the few statements sent in one simple-protocol message (which
 * carries no parameters): quotes doubled and, when there is a backslash, an `E''` literal with
 * backslashes doubled, so it reads the same whatever `standard_conforming_strings` is (as pg's own).
 */
export function literal(value: string): string {
  const quoted = `'${value.replaceAll("'", "''")}'`;
  return value.includes("\\") ? ` E${quoted.replaceAll("\\", "\\\\")}` : quoted;
}

/** `BEGIN` at the store's isolation level, with a limit on lock waits for this transaction only. */
export const begin = (isolationLevel: IsolationLevel, lockWaitMs: number | undefined) =>
  `BEGIN ISOLATION LEVEL ${isolationLevel.toUpperCase()}${lockWaitMs === undefined ? "" : `; SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockWaitMs))}`}`;
