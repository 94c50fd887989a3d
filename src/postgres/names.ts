import { optionError } from "../shared/errors.js";

/** Plain SQL identifiers only: a name that needs quoting to be read is more likely a mistake than a wish. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,49}$/;

export const DEFAULT_SCHEMA = "public";
export const DEFAULT_TABLE = "merchant_webhooks_inbox";

export interface TableNames {
  /** PostgreSQL schema the tables live in. Default `public`. */
  schema?: string;
  /** The records table; the positions table is this name with `_positions`. Default `merchant_webhooks_inbox`. */
  table?: string;
}

/** The quoted, schema-qualified names the SQL uses, checked once at construction. */
export interface QualifiedNames {
  schema: string;
  table: string;
  records: string;
  positions: string;
  /** The schema version table `migrate()` keeps (one row per step run, see migrations.ts). */
  versions: string;
  /** Index names, unqualified (PostgreSQL puts an index in its table's schema). */
  waitingIndex: string;
  positionsUpdatedIndex: string;
  /** The console's event-type and subscription pages (migration step 3). */
  eventTypeIndex: string;
  subscriptionIndex: string;
  /** The dead letters holding their lanes (migration step 4). */
  heldIndex: string;
  /** The processing records that keep an in-process queue's data, by lease, for the sweep (migration step 8). */
  keptIndex: string;
  /** Prefix of the advisory lock keys, so two inbox tables never share a lock. */
  lockPrefix: string;
  /**
   * The function and the procedure `migrate()` installs beside the tables, schema-qualified and versioned by name: a
   * store whose statements changed calls a new name, which an older schema does not have.
   */
  claimFunction: string;
  completeFunction: string;
  /** Why the completion of a record its claim wrote completed was refused, raised (see refuseFunctionSql). */
  refuseFunction: string;
  /**
   * The fence around a handler's transaction (see fence-sql.ts): its table, the function that puts it
   * up, its trigger's function, and the function that ends a holder idle past its bound.
   */
  fence: string;
  fenceFunction: string;
  fenceCheckFunction: string;
  endOverdueFunction: string;
}

export function qualifiedNames({ schema = DEFAULT_SCHEMA, table = DEFAULT_TABLE }: TableNames = {}): QualifiedNames {
  for (const [what, name] of [
    ["schema", schema],
    ["table", table],
  ] as const) {
    if (typeof name !== "string" || !IDENTIFIER.test(name))
      throw optionError(
        new TypeError(
          `postgresStore: ${what} ${JSON.stringify(name)} is not a plain identifier (lower-case letters, digits and _, starting with a letter or _, at most 50 characters)`,
        ),
        "MW_INVALID_OPTION",
        what,
      );
  }
  const quote = (name: string) => `"${name}"`;
  return {
    schema,
    table,
    records: `${quote(schema)}.${quote(table)}`,
    positions: `${quote(schema)}.${quote(`${table}_positions`)}`,
    versions: `${quote(schema)}.${quote(`${table}_version`)}`,
    waitingIndex: quote(`${table}_waiting`),
    positionsUpdatedIndex: quote(`${table}_positions_updated_at`),
    eventTypeIndex: quote(`${table}_event_type`),
    subscriptionIndex: quote(`${table}_subscription`),
    heldIndex: quote(`${table}_held`),
    keptIndex: quote(`${table}_kept_lease`),
    lockPrefix: `${schema}.${table}:`,
    claimFunction: `${quote(schema)}.${quote(`${table}_claim_v5`)}`,
    completeFunction: `${quote(schema)}.${quote(`${table}_complete_v7`)}`,
    refuseFunction: `${quote(schema)}.${quote(`${table}_refuse_v6`)}`,
    fence: `${quote(schema)}.${quote(`${table}_fence`)}`,
    fenceFunction: `${quote(schema)}.${quote(`${table}_fence_v3`)}`,
    fenceCheckFunction: `${quote(schema)}.${quote(`${table}_fence_check_v3`)}`,
    endOverdueFunction: `${quote(schema)}.${quote(`${table}_end_overdue_v3`)}`,
  };
}

/** The call that brings these tables to this release's version, as a message names it. */
export function migrateCallFor(names: QualifiedNames): string {
  const own = names.schema === "public" && names.table === "merchant_webhooks_inbox";
  return `migrate(pool${own ? "" : `, { schema: "${names.schema}", table: "${names.table}" }`}) from merchant-webhooks/postgres`;
}
