import { createHash } from "node:crypto";
import type { Query } from "./sessions.js";

/**
 * A statement prepared on the server once per connection (SQL `PREPARE`) and then run by `EXECUTE`
 * in a simple-protocol message with other statements (`BEGIN`, `COMMIT`), which carries no
 * parameters of its own. A long statement sent as text is parsed, analysed and planned again every
 * time: for the first claim's, that cost the server more than the PL/pgSQL function it replaces,
 * whose plans PL/pgSQL caches. Prepared, it is planned once per connection (a generic plan after
 * PostgreSQL's first five). Where statements cannot be prepared (a pooler between: see `PreparedUse`),
 * the claim goes through that function instead, whose cached plans are the server process's own.
 */
export interface PreparedStatement {
  /** Unique to the statement's text, so two stores (tables, retentions, releases) never share one. */
  name: string;
  prepare: string;
}

export function preparedStatement(kind: string, parameterTypes: readonly string[], body: string): PreparedStatement {
  const text = `(${parameterTypes.join(", ")}) AS ${body}`;
  const name = `merchant_webhooks_${kind}_${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
  return { name, prepare: `PREPARE ${name}${text}` };
}

/**
 * Whether a store prepares its statements: the `preparedStatements` option, one object the store's
 * claim paths all read. Prepared statements belong to a server connection; behind a pooler that
 * shares server connections between transactions (PgBouncer in transaction mode), the next
 * transaction of a client may run on a server connection that lacks them, or holds them already.
 * The first sign of one turns preparing off for the store, for good (see `executePrepared`).
 */
export interface PreparedUse {
  enabled: boolean;
}

export const preparedUse = (enabled = true): PreparedUse => ({ enabled });

/** SQLSTATE of an `EXECUTE` of a name the connection does not hold (never prepared there, or deallocated). */
export const NO_PREPARED_STATEMENT = "26000";

/** The names prepared on each connection, as far as this process knows (a `DEALLOCATE` it does not see). */
const preparedOn = new WeakMap<object, Set<string>>();

/** SQLSTATE of a `PREPARE` of a name the connection holds already. */
export const PREPARED_ALREADY = "42P05";

/**
 * The `PREPARE` to send ahead of the statement's first `EXECUTE` on `connection` (then counted as
 * prepared there), or nothing. Where the count is wrong (a handler's `DEALLOCATE`, a message that
 * failed before its `PREPARE` ran, a pooler), the server says so (`NO_PREPARED_STATEMENT`,
 * `PREPARED_ALREADY`): see `executePrepared`.
 */
export function prepareFirst(connection: object, statements: readonly PreparedStatement[]): string {
  let names = preparedOn.get(connection);
  if (!names) preparedOn.set(connection, (names = new Set()));
  let prepare = "";
  for (const statement of statements) {
    if (names.has(statement.name)) continue;
    names.add(statement.name);
    prepare += `${statement.prepare}; `;
  }
  return prepare;
}

/**
 * Send `prepared(prefix)`, the prefix the `PREPARE` where the connection lacks it; or, with preparing
 * off, `unprepared()`, the same work in statements that need nothing of the connection. Where the
 * server finds the count wrong, the message ran nothing of its own (its `EXECUTE` or `PREPARE`
 * failed, the transaction it opened is rolled back here) and `unprepared()` is sent instead, right on
 * any server connection. Then the connection's server process is asked for: the one the connection
 * started with (pg's `processID`) means a direct connection, whose count is put right and prepared
 * again next time (a handler's `DEALLOCATE`); any other means a pooler hands this connection's
 * transactions to server connections in turn, and the store stops preparing. `prepared` says which ran.
 */
export async function executePrepared<R extends { [column: string]: unknown }>(
  use: PreparedUse,
  connection: object,
  statements: readonly PreparedStatement[],
  query: Query,
  prepared: (prepare: string) => string,
  unprepared: () => string,
): Promise<{ rows: R[]; prepared: boolean }> {
  if (!use.enabled) return { rows: await query<R>(unprepared()), prepared: false };
  try {
    return { rows: await query<R>(prepared(prepareFirst(connection, statements))), prepared: true };
  } catch (err) {
    const state = (err as { code?: unknown })?.code;
    if (state !== NO_PREPARED_STATEMENT && state !== PREPARED_ALREADY) throw err;
    await query("ROLLBACK");
    const [server] = await query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    if (server?.pid !== (connection as { processID?: unknown }).processID) use.enabled = false;
    else recountPrepared(connection, statements, err, 0);
    return { rows: await query<R>(unprepared()), prepared: false };
  }
}

/**
 * Where the server found this process's count for `connection` wrong (`err`), the count put right:
 * true when the message that failed ran nothing of its own and is to be sent again (its `tries`-th
 * resend: a `PREPARED_ALREADY` only at the first).
 */
export function recountPrepared(
  connection: object,
  statements: readonly PreparedStatement[],
  err: unknown,
  tries: number,
): boolean {
  const state = (err as { code?: unknown })?.code;
  // Which one is named in the message only; all are prepared again (or none), as they were together.
  if (state === NO_PREPARED_STATEMENT) for (const { name } of statements) preparedOn.get(connection)?.delete(name);
  else if (state === PREPARED_ALREADY && tries === 0)
    for (const { name } of statements) preparedOn.get(connection)?.add(name);
  else return false;
  return true;
}

/**
 * Each of `statements` prepared unless the connection holds it already, in one statement that never
 * fails for that (`PREPARED_ALREADY` caught in a `DO` block): for a connection in a transaction the
 * store did not open (an ORM's), which a failed statement would abort.
 */
export function prepareMissing(statements: readonly PreparedStatement[]): string {
  const each = statements.map(
    ({ prepare }) =>
      `BEGIN EXECUTE $mw_statement$${prepare}$mw_statement$; EXCEPTION WHEN duplicate_prepared_statement THEN NULL; END;`,
  );
  return `DO $mw_prepare$ BEGIN ${each.join(" ")} END $mw_prepare$`;
}
