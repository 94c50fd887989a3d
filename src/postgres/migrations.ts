import { claimFunctionSql } from "./claim-sql.js";
import { fenceSql } from "./fence-sql.js";
import type { QualifiedNames } from "./names.js";
import { completeFunctionSql, refuseFunctionSql } from "./settle-sql.js";

/**
 * Every change to the inbox's tables, in order: the one home of the schema's SQL (as pg-boss keeps its
 * plans). A step is run once, in a transaction of its own, and recorded in `<table>_version`; a
 * database is at the version of its last recorded step.
 *
 * Rules for a new step (append it; never edit a published one):
 * - It must leave the previous release able to run (add, never rename or drop, what that release
 *   reads), or say it cannot with `readableFrom`: a store older than that refuses to start on it.
 * - A changed function gets a new name (`_v4`), so a store calls only functions its own step made;
 *   the functions of this release are installed with the last step (see `functionsSql`), and those
 *   of the release before are left in place for its receivers still running.
 * - A lock on the records table (`ALTER TABLE`, `CREATE INDEX`) waits for the handlers' transactions
 *   holding it, and every new claim queues behind it: a step's transaction waits at most
 *   `LOCK_WAIT_MS` for its locks, then is rolled back and tried again (see `migrate()`), so a deploy's
 *   `migrate()` holds receivers up by that much at a time, never for a handler's whole run. An index
 *   is built with `createIndex` (which holds writes for the build: about 6 s an index a million
 *   records; docs/postgres.md shows how to build it beforehand, concurrently).
 */
export interface MigrationStep {
  version: number;
  /** The oldest schema version whose code still works on this one (a store from before it refuses). */
  readableFrom: number;
  /** What the step does, recorded beside its version. */
  description: string;
  /** The step's DDL for one inbox; idempotent, so that the shipped SQL file can be run twice. */
  sql(names: QualifiedNames): string;
}

export const MIGRATION_STEPS: readonly MigrationStep[] = [
  {
    version: 1,
    readableFrom: 1,
    description: "the 0.1.0 tables: records, positions and their indexes",
    // As 0.1.0 shipped them (`git show 3a3c61a:src/postgres/schema-sql.ts`). Positions are compared
    // as text byte by byte (`COLLATE "C"`), as every store compares them (src/idempotency/position.ts).
    sql: (names) => `CREATE TABLE IF NOT EXISTS ${names.records} (
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
${createIndex(names.schema, `"${names.table}_list"`, `${names.records} (state, updated_at, id)`)}`,
  },
  {
    version: 2,
    // 0.1.0 reads no version, and runs on this schema: it never writes the fence table.
    readableFrom: 1,
    description: "the fence table around a handler's transaction; claim and completion functions v3",
    // The fence's table comes with its trigger, in fenceSql (installed with the functions).
    sql: () => "",
  },
  {
    version: 3,
    // The release before reads none of the new columns, and its routines (v3) stay for its receivers.
    readableFrom: 1,
    description: "event type and subscription on the records, indexed for the console; claim and completion v4",
    // Nullable columns without a default: a change of the catalog alone, no row rewritten. The lock it
    // takes for that instant waits for no handler (see LOCK_WAIT_MS). The indexes serve the console's
    // event-type and subscription pages as the list index serves its state pages; records written
    // before this step have neither and are left out of both.
    sql: (names) => `ALTER TABLE ${names.records} ADD COLUMN IF NOT EXISTS event_type text NULL,
  ADD COLUMN IF NOT EXISTS subscription_id text NULL;
${createIndex(names.schema, names.eventTypeIndex, `${names.records} (event_type, updated_at, id) WHERE event_type IS NOT NULL`)}
${createIndex(names.schema, names.subscriptionIndex, `${names.records} (subscription_id, updated_at, id) WHERE subscription_id IS NOT NULL`)}`,
  },
  {
    version: 4,
    // The release before neither reads nor writes the column: its failures let a lane go on, as "skip".
    readableFrom: 1,
    description: "a lane's dead-letter policy on its records, and the held lanes indexed for health()",
    // A nullable column without a default: a change of the catalog alone. `hold_on_dead_letter` is what
    // the receiver's claim was told (`ordering.onDeadLetter: "hold"`); a failure of a record that held
    // its key keeps it waiting, at the head of its lane (see settle-sql.ts). The index holds only the
    // held lanes' dead letters (failed and waiting), so `heldLanes` reads those and nothing else, and a
    // record written pays for it only while it is one.
    sql: (names) => `ALTER TABLE ${names.records} ADD COLUMN IF NOT EXISTS hold_on_dead_letter boolean NULL;
${createIndex(names.schema, names.heldIndex, `${names.records} (updated_at) WHERE waiting AND state = 'failed'`)}`,
  },
  {
    version: 5,
    // Nothing the release before reads changes, and its routines (v4) stay for its receivers.
    readableFrom: 1,
    description:
      "a first delivery's record written completed by its claim, sealed by its completion; claim and completion v5",
    // Routines only (installed with the last step): see claimFunctionSql (its seal, seal_v5, gave way in version 6).
    sql: () => "",
  },
  {
    version: 6,
    // Nothing the release before reads changes, and its routines (seal_v5 among them) stay for its receivers.
    readableFrom: 1,
    description:
      "a first delivery's claim and its seal as plain statements (no PL/pgSQL on their way); the seal's refusal v6",
    // Routines only (installed with the last step): see firstClaimStatement, sealCallSql and refuseFunctionSql.
    sql: () => "",
  },
  {
    version: 7,
    // The release before neither reads nor writes the column; its completion (v5) stays installed for
    // its receivers and leaves the column as it is. This release's completes as v7, clearing it.
    readableFrom: 1,
    description: "an in-process queue's job data kept with its record until it completes; completion v7",
    // A nullable column without a default: a change of the catalog alone. `carried` holds the job data
    // (sealed, or card numbers masked; never card verification data) of a notification an in-process
    // queue accepted, so a receiver on the same tables runs it when the one that accepted it died (see
    // kept-sql.ts). Cleared by the completion, gone with a release; a failed record keeps it to be redriven.
    sql: (names) => `ALTER TABLE ${names.records} ADD COLUMN IF NOT EXISTS carried text NULL;`,
  },
  {
    version: 8,
    // An index alone: the release before neither needs nor minds it.
    readableFrom: 1,
    description: "the processing records that keep an in-process queue's data indexed by lease, for the sweep",
    // A receiver's sweep for lapsed kept claims (kept-sql.ts `lapsed`) reads along this index: the
    // processing records with data kept, by the end of their lease, so it reads the lapsed ones alone,
    // however many records are processing besides (a busy queue's on the same tables, long leases).
    // Only those rows are in it: any other record written pays nothing for it.
    sql: (names) =>
      createIndex(
        names.schema,
        names.keptIndex,
        `${names.records} (lease_until) WHERE carried IS NOT NULL AND state = 'processing'`,
      ),
  },
];

/**
 * How long a step's transaction waits for a lock before it is rolled back and tried again: about what
 * a claim may wait behind it each time.
 */
export const LOCK_WAIT_MS = 100;

/** The schema version this release's store reads and writes. */
export const SCHEMA_VERSION = MIGRATION_STEPS[MIGRATION_STEPS.length - 1]!.version;

/**
 * This release's functions (and the fence table their trigger sits on), `CREATE OR REPLACE`d in the
 * transaction of the last step a `migrate()` runs.
 */
export function functionsSql(names: QualifiedNames): string {
  return `-- The fence around a handler's transaction, which its claim puts up and its completion seals.
${fenceSql(names)}

-- A notification's claim and its completion, each one statement (see docs/postgres.md).
${claimFunctionSql(names)}

${completeFunctionSql(names)}

${refuseFunctionSql(names)}`;
}

/** The version table: one row per step run (or found already there, for tables older than it). */
export function versionTableSql(names: QualifiedNames): string {
  return `CREATE TABLE IF NOT EXISTS ${names.versions} (
  version integer PRIMARY KEY,
  readable_from integer NOT NULL,
  description text NOT NULL,
  migrated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);`;
}

/** The row recording `step`, as its own transaction writes it. */
export const recordStepSql = (names: QualifiedNames, step: MigrationStep) =>
  `INSERT INTO ${names.versions} (version, readable_from, description) VALUES (${step.version}, ${step.readableFrom}, '${step.description.replaceAll("'", "''")}') ON CONFLICT (version) DO NOTHING;`;

/**
 * The database's version and the oldest code it serves, one row; a version of 0 when nothing is
 * recorded. Read by `migrate()` under its lock and by a store as it starts.
 */
export const readVersionSql = (names: QualifiedNames) =>
  `SELECT coalesce(max(version), 0)::int AS version, coalesce(max(readable_from), 0)::int AS readable_from FROM ${names.versions}`;

/**
 * Tables found without a version table: 0.1.0's (its records table is there) are version 1, recorded
 * as found; nothing there is version 0.
 */
export const baselineSql = (names: QualifiedNames) =>
  `INSERT INTO ${names.versions} (version, readable_from, description)
  SELECT 1, 1, 'found: tables made before versions were recorded (0.1.0)'
  WHERE to_regclass('${names.records.replaceAll("'", "''")}') IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${names.versions});`;

/**
 * An index, created only when missing. `CREATE INDEX IF NOT EXISTS` takes its table's share lock before it
 * finds the index there: it waits for every handler's transaction holding the table, and every new claim
 * then queues behind it, so a deploy's `migrate()` would stall the receivers already running.
 */
export function createIndex(schema: string, name: string, on: string): string {
  return `DO $$ BEGIN
  IF to_regclass('"${schema}".${name}') IS NULL THEN CREATE INDEX ${name} ON ${on}; END IF;
END $$;`;
}

/** The whole schema from nothing to this release, each step recorded: what `migrate()` runs on an empty database. */
export function allStepsSql(names: QualifiedNames): string {
  return [
    `CREATE SCHEMA IF NOT EXISTS "${names.schema}";`,
    versionTableSql(names),
    ...MIGRATION_STEPS.map((step) => `-- Version ${step.version}: ${step.description}\n${step.sql(names)}`),
    functionsSql(names),
    ...MIGRATION_STEPS.map((step) => recordStepSql(names, step)),
  ]
    .filter((part) => part.trim() !== "")
    .join("\n\n");
}
