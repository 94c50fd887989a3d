import type { ClientBase, Pool, QueryResult } from "pg";
import { StoreUnavailableError } from "../idempotency/store.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import {
  allStepsSql,
  baselineSql,
  functionsSql,
  LOCK_WAIT_MS,
  MIGRATION_STEPS,
  readVersionSql,
  recordStepSql,
  SCHEMA_VERSION,
  versionTableSql,
} from "./migrations.js";
import { type QualifiedNames, qualifiedNames, type TableNames } from "./names.js";
import { type FoundVersion, versionProblem } from "./schema-version.js";
import { LOCK_NOT_AVAILABLE, sqlState } from "./sessions.js";

/** First key of `migrate()`'s two-key advisory lock (the second is the schema's hash): "mwmi" in ASCII. */
export const MIGRATE_LOCK_SPACE = 0x6d776d69;

const TABLE_NAME_KEYS: KnownKeys<TableNames> = { schema: true, table: true };

/**
 * The SQL `migrate()` runs on an empty database (every step, then this release's functions, each step
 * recorded), to review or to put in your own migration tool. Idempotent; for tables already there,
 * run `migrate()`, which runs only the steps they lack.
 */
export function postgresSchemaSql(options: TableNames = {}): string {
  rejectUnknownKeys("postgresSchemaSql", options, Object.keys(TABLE_NAME_KEYS));
  return allStepsSql(qualifiedNames(options));
}

/** What a `migrate()` did: the version it found, the one it left, and the steps it ran (none: nothing to do). */
export interface MigrateResult {
  from: number;
  to: number;
  steps: number[];
}

/** A pool (a client is checked out for the run) or a connected client, which stays the caller's. */
export type MigrateConnection = Pick<Pool, "connect" | "query"> | Pick<ClientBase, "query">;

/**
 * Bring the inbox's tables to this release's schema version: create them, or run the steps they lack
 * (0.1.0's tables included), each in a transaction of its own and recorded in `<table>_version`, and
 * install this release's functions with the last. The store never creates or changes them itself.
 * Safe on every deploy and from several processes at once: one holds the schema's advisory lock for
 * the whole run, and another waits for it, then finds nothing to do. Tables at a newer version this
 * release cannot run on are refused (`SchemaTooNewError`); newer ones it can are left as they are.
 */
export async function migrate(pool: MigrateConnection, options: TableNames = {}): Promise<MigrateResult> {
  // A misspelt `schema` would create the tables in `public`, where the store would not look.
  rejectUnknownKeys("migrate", options, Object.keys(TABLE_NAME_KEYS));
  const names = qualifiedNames(options);
  const pooled = "connect" in pool && "idleCount" in pool;
  let client: Pick<ClientBase, "query"> & { release?: (err?: Error | boolean) => void };
  try {
    client = pooled ? await (pool as Pick<Pool, "connect">).connect() : pool;
  } catch (err) {
    throw migrateFailure(err);
  }
  const rows = async (sql: string) => {
    const result = (await client.query(sql)) as unknown as QueryResult | QueryResult[];
    return (Array.isArray(result) ? result[result.length - 1]! : result).rows;
  };
  // One lock per schema for the whole run, so two processes migrating at once (the same table, or two
  // tables into one new schema) take turns. Two-key form: a space of its own, apart from the one-key
  // locks claims take on notification ids. A session lock: each step's transaction commits under it.
  const key = `${MIGRATE_LOCK_SPACE}, hashtext('${names.schema}')`;
  try {
    await refusePooledSession(client, rows);
  } catch (err) {
    // Before the lock, so nothing to unlock: through the pooler, an unlock could free another run's lock.
    client.release?.();
    throw migrateFailure(err);
  }
  let failure: unknown;
  try {
    await rows(`SELECT pg_advisory_lock(${key})`);
    return await runSteps(names, rows);
  } catch (err) {
    failure = err;
    await rows("ROLLBACK").catch(() => undefined);
    throw migrateFailure(err);
  } finally {
    await rows(`SELECT pg_advisory_unlock(${key})`).catch(() => undefined);
    client.release?.(failure instanceof Error && sqlState(failure) === undefined ? failure : undefined);
  }
}

/**
 * The run's lock is a session's: behind a pooler in transaction mode (PgBouncer), the connection's
 * statements run on server connections in turn, and the lock would stay with whichever took it, so
 * that the next `migrate()` waited for it until that server connection closed. Such a connection is
 * known by its server process, other than the one it started with (pg's `processID`), and refused.
 */
async function refusePooledSession(client: object, rows: (sql: string) => Promise<{ pid?: number }[]>): Promise<void> {
  const started = (client as { processID?: unknown }).processID;
  if (typeof started !== "number") return;
  const [server] = await rows("SELECT pg_backend_pid() AS pid");
  if (server?.pid === started) return;
  throw new MerchantWebhooksError(
    "MW_MIGRATE_NEEDS_SESSION",
    "migrate: this connection goes through a pooler in transaction mode (its statements run on another server process than it started with), where migrate()'s session lock would stay held; run migrate() on a direct connection to PostgreSQL, or through a pool in session mode",
  );
}

async function runSteps(names: QualifiedNames, rows: (sql: string) => Promise<FoundVersion[]>): Promise<MigrateResult> {
  // The version table, and tables found without one recorded as the version they are.
  const [found] = await rows(
    `BEGIN; CREATE SCHEMA IF NOT EXISTS "${names.schema}"; ${versionTableSql(names)} ${baselineSql(names)} ${readVersionSql(names)}`,
  );
  const from = found!.version;
  const problem = from > SCHEMA_VERSION ? versionProblem(names, found!) : undefined;
  if (problem) throw problem;
  await rows("COMMIT");
  const steps: number[] = [];
  for (const step of MIGRATION_STEPS) {
    if (step.version <= from) continue;
    const last = step.version === SCHEMA_VERSION;
    await whenLocksFree(rows, () =>
      rows(
        `BEGIN; SET LOCAL lock_timeout = ${LOCK_WAIT_MS}; ${step.sql(names)}\n${last ? functionsSql(names) : ""}\n${recordStepSql(names, step)} COMMIT;`,
      ),
    );
    steps.push(step.version);
  }
  return { from, to: Math.max(from, SCHEMA_VERSION), steps };
}

/** How long `migrate()` keeps trying a step whose locks are held (by handlers' transactions) before it gives up. */
const LOCK_TRIES_MS = 5 * 60_000;

/**
 * Run a step's transaction, rolled back and tried again while it waits past `LOCK_WAIT_MS` for a
 * lock: receivers are held up at most that long each try, between tries not at all.
 */
async function whenLocksFree(rows: (sql: string) => Promise<unknown>, run: () => Promise<unknown>): Promise<void> {
  const until = Date.now() + LOCK_TRIES_MS;
  for (let pause = LOCK_WAIT_MS; ; pause = Math.min(pause * 2, 2_000)) {
    try {
      await run();
      return;
    } catch (err) {
      if (sqlState(err) !== LOCK_NOT_AVAILABLE || Date.now() > until) throw err;
      await rows("ROLLBACK");
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * A database out of reach, told as the store tells it (`StoreUnavailableError`), rather than pg's bare
 * `connect ECONNREFUSED` from a top-level `await migrate(pool)`; an error the server answered with (a
 * missing permission, say) is its own message already, and stays as it is.
 */
function migrateFailure(err: unknown): unknown {
  if (sqlState(err) !== undefined || err instanceof MerchantWebhooksError) return err;
  const message = (err as Error)?.message ?? String(err);
  return new StoreUnavailableError(`migrate: PostgreSQL is unavailable, no table was created: ${message}`, {
    cause: err,
  });
}
