import type { Pool } from "pg";
import { qualifiedNames, type QualifiedNames, type TableNames } from "./names.js";
import { listIndexSql } from "./list-sql.js";

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
CREATE INDEX IF NOT EXISTS ${names.updatedIndex} ON ${names.records} (updated_at);
CREATE INDEX IF NOT EXISTS ${names.waitingIndex} ON ${names.records} (order_key) WHERE waiting;

CREATE TABLE IF NOT EXISTS ${names.positions} (
  order_key text PRIMARY KEY,
  position text COLLATE "C" NULL,
  owner text NULL,
  lease_until timestamptz NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS ${names.positionsUpdatedIndex} ON ${names.positions} (updated_at);
${listIndexSql(names)}
`;
}

/** The SQL `migrate()` runs, to review or to put in your own migrations. */
export function postgresSchemaSql(options: TableNames = {}): string {
  return schemaSqlFor(qualifiedNames(options));
}

/**
 * Create the inbox tables and indexes if they do not exist; safe to run on every deploy. The store
 * never creates them itself: a missing table is an error that names this function.
 */
export async function migrate(pool: Pick<Pool, "query">, options: TableNames = {}): Promise<void> {
  const names = qualifiedNames(options);
  // One lock for the whole script, so two processes migrating at once do not race on CREATE.
  await pool.query(
    `BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('${names.lockPrefix}migrate', 0)); ${schemaSqlFor(names)} COMMIT;`,
  );
}
