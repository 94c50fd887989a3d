import type { Pool, PoolClient, QueryResultRow } from "pg";
import { StoreUnavailableError } from "../idempotency/store.js";
import { withTimeout } from "../shared/time-limit.js";
import type { QualifiedNames } from "./names.js";
import type { ConnectionReports } from "./connection-state.js";

/** A pg client's `query`, narrowed to what the store calls. */
export type Query = <R extends QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

/** Thrown when the inbox tables are missing: the store never creates them on its own. */
export class MissingTableError extends Error {
  override name = "MissingTableError";
}

const UNDEFINED_TABLE = "42P01";
const INVALID_SCHEMA = "3F000";
export const LOCK_NOT_AVAILABLE = "55P03";

/** The SQLSTATE of an error the server sent (a pg DatabaseError has a severity); undefined for socket errors. */
export const sqlState = (err: unknown): string | undefined => {
  if (typeof err !== "object" || err === null) return undefined;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === "string" && typeof severity === "string" ? code : undefined;
};

/**
 * Checked-out clients with a time limit on the check-out and on every statement. A client whose
 * statement ran out of time, or that failed for any reason but a plain SQL error, is destroyed rather
 * than returned to the pool: it may still be running that statement, or be inside a transaction.
 */
export function sessions(pool: Pool, names: QualifiedNames, timeoutMs: number, reports: ConnectionReports) {
  const late = (what: string) => () =>
    new StoreUnavailableError(`PostgreSQL did not answer ${what} within ${timeoutMs} ms`);

  function unavailable(err: unknown): Error {
    if (err instanceof MissingTableError) return err;
    if (err instanceof StoreUnavailableError) {
      reports.unreachable(err.message);
      return err;
    }
    const state = sqlState(err);
    if (state === UNDEFINED_TABLE || state === INVALID_SCHEMA) {
      reports.answered();
      return new MissingTableError(
        `the inbox table ${names.records} does not exist: run migrate(pool${names.schema === "public" && names.table === "merchant_webhooks_inbox" ? "" : `, { schema: "${names.schema}", table: "${names.table}" }`}) from merchant-webhooks/postgres once before receiving`,
      );
    }
    // A SQL error is an answer; anything else (refused, reset, timed out) means the server is out of reach.
    if (state === undefined) reports.unreachable((err as Error)?.message ?? String(err));
    else reports.answered();
    return new StoreUnavailableError(`PostgreSQL is unavailable: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }

  async function connect(): Promise<PoolClient> {
    const pending = pool.connect();
    try {
      const client = await withTimeout(pending, timeoutMs, late("a connection"));
      reports.answered();
      return client;
    } catch (err) {
      // A connection that arrives after the time limit goes back to the pool unused.
      pending.then(
        (client) => client.release(),
        () => {},
      );
      throw unavailable(err);
    }
  }

  const queryOn =
    (client: PoolClient): Query =>
    async <R extends QueryResultRow>(text: string, values?: unknown[]) =>
      (await withTimeout(client.query<R>(text, values), timeoutMs, late("a statement"))).rows;

  /** Run `work` on one checked-out client, then give the client back (or destroy it, after a failure). */
  async function withClient<T>(work: (query: Query, client: PoolClient) => Promise<T>): Promise<T> {
    const client = await connect();
    try {
      const result = await work(queryOn(client), client);
      client.release();
      return result;
    } catch (err) {
      client.release(err instanceof Error ? err : new Error(String(err)));
      throw unavailable(err);
    }
  }

  /** Run `work` in a transaction whose lock waits, if `lockWaitMs` is given, give up after it. */
  function inTransaction<T>(lockWaitMs: number | undefined, work: (query: Query) => Promise<T>): Promise<T> {
    return withClient(async (query) => {
      await query(begin(lockWaitMs));
      const result = await work(query);
      await query("COMMIT");
      return result;
    });
  }

  return { connect, queryOn, withClient, inTransaction, unavailable };
}

export type Sessions = ReturnType<typeof sessions>;

/** `BEGIN`, with a limit on lock waits for this transaction only. */
export const begin = (lockWaitMs: number | undefined) =>
  lockWaitMs === undefined ? "BEGIN" : `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockWaitMs))}`;
