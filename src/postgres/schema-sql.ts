import type { Pool } from "pg";
import { StoreUnavailableError } from "../idempotency/store.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { claimFunctionSql } from "./claim-sql.js";
import { fenceSql } from "./fence-sql.js";
import { type QualifiedNames, qualifiedNames, type TableNames } from "./names.js";
import { sqlState } from "./sessions.js";
import { completeFunctionSql } from "./settle-sql.js";

/**
 * The inbox's tables. Positions are compared as text byte by byte (`COLLATE "C"`), as every store
 * compares them (see src/idempotency/position.ts); a locale collation could order them differently.
 */
export function schemaSqlFor(names: QualifiedNames): string {
  return `CREATE SCHEMA IF NOT EXISTS "${names.schema}";

CREATE TABLE IF NOT EXISTS ${names.records} (
  id text PRIMARY KEY,
  order_key text NULL,
  position text COLLATE "C" NULL,
  holds_key boolean NOT NULL DEFAULT false,
  waiting boolean NOT NULL DEFAULT false,
  fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('processing', 'queued', 'completed', 'failed')),
  owner text NULL,
  lease_until timestamptz NULL,
  attempts integer NOT NULL DEFAULT 0,
  answer jsonb NULL,
  error text NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
${createIndex(names.schema, names.waitingIndex, `${names.records} (order_key) WHERE waiting`)}

CREATE TABLE IF NOT EXISTS ${names.positions} (
  order_key text PRIMARY KEY,
  position text COLLATE "C" NULL,
  owner text NULL,
  lease_until timestamptz NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
${createIndex(names.schema, names.positionsUpdatedIndex, `${names.positions} (updated_at)`)}
-- The console's pages (list): one state's records by time of last change, ties by id; also purge's
-- (settled states, older than a time). The only index on the records but the id's and the waiting
-- list's (which holds only waiting rows): every record written pays for each one.
${createIndex(names.schema, `"${names.table}_list"`, `${names.records} (state, updated_at, id)`)}

-- The fence around a handler's transaction, which its claim puts up and its completion seals.
${fenceSql(names)}

-- A notification's claim and its completion, each one statement (see docs/postgres.md).
${claimFunctionSql(names)}

${completeFunctionSql(names)}
`;
}

/**
 * An index, created only when missing. `CREATE INDEX IF NOT EXISTS` takes its table's share lock before it
 * finds the index there: it waits for every handler's transaction holding the table, and every new claim
 * then queues behind it, so a deploy's `migrate()` would stall the receivers already running.
 */
function createIndex(schema: string, name: string, on: string): string {
  return `DO $$ BEGIN
  IF to_regclass('"${schema}".${name}') IS NULL THEN CREATE INDEX ${name} ON ${on}; END IF;
END $$;`;
}

/** First key of `migrate()`'s two-key advisory lock (the second is the schema's hash): "mwmi" in ASCII. */
export const MIGRATE_LOCK_SPACE = 0x6d776d69;

const TABLE_NAME_KEYS: KnownKeys<TableNames> = { schema: true, table: true };

/** The SQL `migrate()` runs, to review or to put in your own migrations. */
export function postgresSchemaSql(options: TableNames = {}): string {
  rejectUnknownKeys("postgresSchemaSql", options, Object.keys(TABLE_NAME_KEYS));
  return schemaSqlFor(qualifiedNames(options));
}

/**
 * Create the inbox tables and indexes if they do not exist, and install (or replace) the store's claim
 * and completion functions; safe to run on every deploy. The store never creates them itself: a
 * missing table or function is an error that names this function.
 */
export async function migrate(pool: Pick<Pool, "query">, options: TableNames = {}): Promise<void> {
  // A misspelt `schema` would create the tables in `public`, where the store would not look.
  rejectUnknownKeys("migrate", options, Object.keys(TABLE_NAME_KEYS));
  const names = qualifiedNames(options);
  // One lock per schema for the whole script, so two processes migrating at once (the same table, or
  // two tables into one new schema) do not race on CREATE. Two-key form: a space of its own, apart
  // from the one-key locks claims take on notification ids.
  await pool
    .query(
      `BEGIN; SELECT pg_advisory_xact_lock(${MIGRATE_LOCK_SPACE}, hashtext('${names.schema}')); ${schemaSqlFor(names)} COMMIT;`,
    )
    .catch((err: unknown) => {
      throw migrateFailure(err);
    });
}

/**
 * A database out of reach, told as the store tells it (`StoreUnavailableError`), rather than pg's bare
 * `connect ECONNREFUSED` from a top-level `await migrate(pool)`; an error the server answered with (a
 * missing permission, say) is its own message already, and stays as it is.
 */
function migrateFailure(err: unknown): unknown {
  if (sqlState(err) !== undefined) return err;
  const message = (err as Error)?.message ?? String(err);
  return new StoreUnavailableError(`migrate: PostgreSQL is unavailable, no table was created: ${message}`, {
    cause: err,
  });
}
