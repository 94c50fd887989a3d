import type { ClientBase, Pool } from "pg";
import { sqlState } from "../postgres/sessions.js";
import { optionError } from "../shared/errors.js";

/** Plain SQL identifiers only, as the inbox's names (src/postgres/names.ts). */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,49}$/;

export const DEFAULT_RECONCILE_TABLE_PREFIX = "merchant_webhooks_reconcile";

export interface ReconcileTableNames {
  /** PostgreSQL schema the tables live in. Default `public`. */
  schema?: string;
  /** The tables' names start with it: `<prefix>_ledger`, `_lock`, `_checkpoint`, `_reports`, `_subscriptions`, `_mentions`, `_version`. */
  prefix?: string;
}

/** The quoted, schema-qualified names, checked once. */
export interface ReconcileTables {
  schema: string;
  ledger: string;
  /** Unqualified: PostgreSQL puts an index in its table's schema. */
  ledgerWindowIndex: string;
  lock: string;
  checkpoint: string;
  reports: string;
  subscriptions: string;
  mentions: string;
  mentionsAtIndex: string;
  versions: string;
}

export function reconcileTables({
  schema = "public",
  prefix = DEFAULT_RECONCILE_TABLE_PREFIX,
}: ReconcileTableNames = {}): ReconcileTables {
  for (const [what, name] of [
    ["schema", schema],
    ["prefix", prefix],
  ] as const)
    if (typeof name !== "string" || !IDENTIFIER.test(name))
      throw optionError(
        new TypeError(
          `merchant-webhooks/reconcile: ${what} ${JSON.stringify(name)} is not a plain identifier (lower-case letters, digits and _, starting with a letter or _, at most 50 characters)`,
        ),
        "MW_INVALID_OPTION",
        what,
      );
  const table = (suffix: string) => `"${schema}"."${prefix}_${suffix}"`;
  return {
    schema,
    ledger: table("ledger"),
    ledgerWindowIndex: `"${prefix}_ledger_window"`,
    lock: table("lock"),
    checkpoint: table("checkpoint"),
    reports: table("reports"),
    subscriptions: table("subscriptions"),
    mentions: table("mentions"),
    mentionsAtIndex: `"${prefix}_mentions_at"`,
    versions: table("version"),
  };
}

/**
 * The reconcile tables' steps, in order, as the inbox keeps its own (src/postgres/migrations.ts):
 * append a step, never edit a published one; each is idempotent and recorded in `<prefix>_version`.
 * They are a set of their own, not steps of the inbox's: a merchant may reconcile with the Redis store
 * and keep the ledger here, or use the PostgreSQL store without reconciling.
 */
export const RECONCILE_MIGRATION_STEPS: readonly {
  version: number;
  description: string;
  sql: (t: ReconcileTables) => string;
}[] = [
  {
    version: 1,
    description: "the order ledger, the run lock, the checkpoint, the reports, the subscriptions' last notification",
    // Keys and positions compare byte by byte (`COLLATE "C"`), as the other ledgers and stores compare them.
    sql: (t) => `CREATE TABLE IF NOT EXISTS ${t.ledger} (
  merchant_id text COLLATE "C" NOT NULL DEFAULT '',
  reference_id text COLLATE "C" NOT NULL,
  entry jsonb NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (merchant_id, reference_id)
);
CREATE INDEX IF NOT EXISTS ${t.ledgerWindowIndex} ON ${t.ledger} (created_at, merchant_id, reference_id);
CREATE TABLE IF NOT EXISTS ${t.lock} (
  name text PRIMARY KEY,
  owner text NOT NULL,
  lease_until timestamptz NOT NULL
);
-- JSON as text, not jsonb: the checkpoint's ledger key holds a NUL, which jsonb refuses.
CREATE TABLE IF NOT EXISTS ${t.checkpoint} (
  name text PRIMARY KEY,
  checkpoint text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.reports} (
  seq bigserial PRIMARY KEY,
  report jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t.subscriptions} (
  subscription_id text COLLATE "C" PRIMARY KEY,
  position text COLLATE "C" NOT NULL,
  seen jsonb NOT NULL
);`,
  },
  {
    version: 2,
    description: "the orders a processed notification or order event named, for the settlement list",
    sql: (t) => `CREATE TABLE IF NOT EXISTS ${t.mentions} (
  order_id text COLLATE "C" PRIMARY KEY,
  at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS ${t.mentionsAtIndex} ON ${t.mentions} (at);`,
  },
];

const versionTableSql = (t: ReconcileTables) => `CREATE TABLE IF NOT EXISTS ${t.versions} (
  version integer PRIMARY KEY,
  description text NOT NULL,
  migrated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);`;

const recordStepSql = (t: ReconcileTables, step: (typeof RECONCILE_MIGRATION_STEPS)[number]) =>
  `INSERT INTO ${t.versions} (version, description) VALUES (${step.version}, '${step.description.replaceAll("'", "''")}') ON CONFLICT (version) DO NOTHING;`;

/** The reconcile tables from nothing, each step recorded: to review, or to put in your own migration tool. Idempotent. */
export function reconcileSchemaSql(options: ReconcileTableNames = {}): string {
  const t = reconcileTables(options);
  return [
    `CREATE SCHEMA IF NOT EXISTS "${t.schema}";`,
    versionTableSql(t),
    ...RECONCILE_MIGRATION_STEPS.flatMap((step) => [step.sql(t), recordStepSql(t, step)]),
  ].join("\n\n");
}

/** First key of the migration's two-key advisory lock: "mwrc" in ASCII, apart from the inbox's "mwmi". */
const MIGRATE_LOCK_SPACE = 0x6d777263;

/**
 * Bring the reconcile tables to this release's version: the steps they lack, each in a transaction of
 * its own and recorded. Safe on every deploy and from several processes at once: one holds the
 * schema's advisory lock for the run, another waits, then finds nothing to do.
 */
export async function migrateReconcile(
  pool: Pick<Pool, "connect" | "query"> | Pick<ClientBase, "query">,
  options: ReconcileTableNames = {},
): Promise<{ from: number; to: number; steps: number[] }> {
  const t = reconcileTables(options);
  const pooled = "connect" in pool && "idleCount" in pool;
  const client: Pick<ClientBase, "query"> & { release?: (err?: Error | boolean) => void } = pooled
    ? await (pool as Pick<Pool, "connect">).connect()
    : pool;
  const key = `${MIGRATE_LOCK_SPACE}, hashtext('${t.schema}')`;
  let failure: unknown;
  try {
    await client.query(`SELECT pg_advisory_lock(${key})`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${t.schema}"; ${versionTableSql(t)}`);
    const found = await client.query<{ version: number }>(
      `SELECT coalesce(max(version), 0)::int AS version FROM ${t.versions}`,
    );
    const from = found.rows[0]!.version;
    const steps: number[] = [];
    for (const step of RECONCILE_MIGRATION_STEPS) {
      if (step.version <= from) continue;
      await client.query(`BEGIN; ${step.sql(t)}\n${recordStepSql(t, step)} COMMIT;`);
      steps.push(step.version);
    }
    return { from, to: Math.max(from, RECONCILE_MIGRATION_STEPS.at(-1)!.version), steps };
  } catch (err) {
    failure = err;
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${key})`).catch(() => undefined);
    client.release?.(failure instanceof Error && sqlState(failure) === undefined ? failure : undefined);
  }
}
