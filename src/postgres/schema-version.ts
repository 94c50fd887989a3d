import { MerchantWebhooksError } from "../shared/errors.js";
import { readVersionSql, SCHEMA_VERSION } from "./migrations.js";
import { migrateCallFor, type QualifiedNames } from "./names.js";
import { INVALID_SCHEMA, MissingTableError, type Query, type Sessions, sqlState, UNDEFINED_TABLE } from "./sessions.js";

/** The schema is newer than this release can run on: its version says so (`readable_from`). */
export class SchemaTooNewError extends MerchantWebhooksError {
  override name = "SchemaTooNewError";
  constructor(message: string) {
    super("MW_SCHEMA_TOO_NEW", message);
  }
}

export interface FoundVersion {
  version: number;
  readable_from: number;
}

/**
 * Why this release cannot run on tables at `found`, if it cannot: older ones need `migrate()` (the
 * store answers 503 until then, as for missing tables); newer ones that no longer serve this release's
 * code are refused with their own code, since no call of this release can fix them.
 */
export function versionProblem(names: QualifiedNames, found: FoundVersion): Error | undefined {
  if (found.readable_from > SCHEMA_VERSION)
    return new SchemaTooNewError(
      `the inbox tables ${names.records} are at schema version ${found.version}, which serves merchant-webhooks from its schema version ${found.readable_from} on; this release knows version ${SCHEMA_VERSION}: deploy the release that migrated them (migrate() never goes back)`,
    );
  if (found.version === 0)
    return new MissingTableError(
      `the inbox table ${names.records} does not exist: run ${migrateCallFor(names)} once before receiving`,
    );
  if (found.version < SCHEMA_VERSION)
    return new MissingTableError(
      `the inbox tables ${names.records} are at schema version ${found.version} and this release needs ${SCHEMA_VERSION}: run ${migrateCallFor(names)}, which brings them to it keeping every record`,
    );
  return undefined;
}

/**
 * The tables' version as a store finds it: from the version table, or, without one, 1 where 0.1.0's
 * records table is (it recorded no version) and 0 where nothing is.
 */
async function foundVersion(query: Query, names: QualifiedNames): Promise<FoundVersion> {
  try {
    return (await query<FoundVersion>(readVersionSql(names)))[0]!;
  } catch (err) {
    if (sqlState(err) !== UNDEFINED_TABLE && sqlState(err) !== INVALID_SCHEMA) throw err;
    const [records] = await query<{ there: boolean }>("SELECT to_regclass($1) IS NOT NULL AS there", [names.records]);
    return { version: records!.there ? 1 : 0, readable_from: 0 };
  }
}

/** Why this release cannot run on the tables as they are now, if it cannot. */
export const problemWith = async (query: Query, names: QualifiedNames) =>
  versionProblem(names, await foundVersion(query, names));

/**
 * The store's sessions, checking the tables' version before the first statement (and again after each
 * check that failed, so a `migrate()` run meanwhile is found): a store on tables it cannot run on
 * answers every call with why (503 at the receiver), never with a statement's failure halfway.
 * Once checked, nothing more per call: one round trip per store, not per delivery.
 */
export function versionChecked(db: Sessions, names: QualifiedNames): Sessions {
  let ok = false;
  let checking: Promise<void> | undefined;
  const check = () =>
    (checking ??= db
      .withClient((query) => problemWith(query, names))
      .then((problem) => {
        if (problem) throw problem;
        ok = true;
      })
      .finally(() => {
        checking = undefined;
      }));
  return {
    ...db,
    connect: () => (ok ? db.connect() : check().then(() => db.connect())),
    withClient: (work) => (ok ? db.withClient(work) : check().then(() => db.withClient(work))),
    inTransaction: (lockWaitMs, work) =>
      ok ? db.inTransaction(lockWaitMs, work) : check().then(() => db.inTransaction(lockWaitMs, work)),
  };
}
