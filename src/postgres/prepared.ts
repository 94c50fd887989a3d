import { createHash } from "node:crypto";

/**
 * A statement prepared on the server once per connection (SQL `PREPARE`) and then run by `EXECUTE`
 * in a simple-protocol message with other statements (`BEGIN`, `COMMIT`), which carries no
 * parameters of its own. A long statement sent as text is parsed, analysed and planned again every
 * time: for the first claim's, that cost the server more than the PL/pgSQL function it replaces,
 * whose plans PL/pgSQL caches. Prepared, it is planned once per connection (a generic plan after
 * PostgreSQL's first five).
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

/** SQLSTATE of an `EXECUTE` of a name the connection does not hold (never prepared there, or deallocated). */
export const NO_PREPARED_STATEMENT = "26000";

/** The names prepared on each connection, as far as this process knows (a `DEALLOCATE` it does not see). */
const preparedOn = new WeakMap<object, Set<string>>();

/** SQLSTATE of a `PREPARE` of a name the connection holds already. */
export const PREPARED_ALREADY = "42P05";

/**
 * The `PREPARE` to send ahead of the statement's first `EXECUTE` on `connection` (then counted as
 * prepared there), or nothing. Where the count is wrong (a handler's `DEALLOCATE`, a message that
 * failed before its `PREPARE` ran), the server says so (`NO_PREPARED_STATEMENT`, `PREPARED_ALREADY`):
 * see `executePrepared`.
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
 * Send `message(prefix)`, the prefix the `PREPARE` where the connection lacks it. Where the server
 * finds the count wrong, the message ran nothing of its own (its `EXECUTE` or `PREPARE` failed, the
 * transaction it opened is rolled back here) and is sent once more, the count put right.
 */
export async function executePrepared<T>(
  connection: object,
  statements: readonly PreparedStatement[],
  query: (text: string) => Promise<T>,
  message: (prepare: string) => string,
): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await query(message(prepareFirst(connection, statements)));
    } catch (err) {
      if (tries > 1 || !recountPrepared(connection, statements, err, tries)) throw err;
      await query("ROLLBACK");
    }
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
