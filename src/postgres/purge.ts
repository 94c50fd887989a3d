import type { Pool } from "pg";
import { DEFAULT_RETENTION_SECONDS } from "../idempotency/store.js";
import { optionError } from "../shared/errors.js";
import { qualifiedNames, type TableNames } from "./names.js";
import { problemWith } from "./schema-version.js";

export interface PurgeOptions extends TableNames {
  /** Delete settled records (completed, failed) last changed longer ago than this. Default 7 days, the store's retention. */
  olderThanSeconds?: number;
}

/**
 * Delete settled records past retention, positions nobody holds that have not moved since, and the
 * fence rows of backends that have ended. The
 * store already treats such rows as gone; this gives the space back. Run it from a scheduled job
 * (cron, pg_cron); the records' (state, updated_at) index and the positions' (updated_at) one keep it
 * cheap. Returns how many rows were deleted.
 */
export async function purge(
  pool: Pick<Pool, "query">,
  options: PurgeOptions = {},
): Promise<{ records: number; positions: number; fences: number }> {
  const names = qualifiedNames(options);
  const seconds = options.olderThanSeconds ?? DEFAULT_RETENTION_SECONDS;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0)
    throw optionError(
      new TypeError("purge: olderThanSeconds must be a number of seconds, 0 or more"),
      "MW_INVALID_OPTION",
      "olderThanSeconds",
    );
  // A subquery, computed once before the scan: a volatile clock_timestamp() compared row by row could
  // not bound an index scan, and every purge would read the whole table.
  // Tables this release cannot read are not its to delete from: the store's own check, first.
  const problem = await problemWith(async (text, values) => (await pool.query(text, values)).rows, names);
  if (problem) throw problem;
  const before = "(SELECT clock_timestamp() - $1::float8 * interval '1 second')";
  const records = await pool.query(
    `DELETE FROM ${names.records} WHERE state IN ('completed', 'failed') AND updated_at < ${before}`,
    [seconds],
  );
  const positions = await pool.query(`DELETE FROM ${names.positions} WHERE owner IS NULL AND updated_at < ${before}`, [
    seconds,
  ]);
  // A fence row belongs to one backend and is updated in place by that backend's next claim; once the
  // backend is gone its row is never read again, and process ids cycle through every value in time.
  const fences = await pool.query(
    `DELETE FROM ${names.fence} WHERE backend NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)`,
  );
  return { records: records.rowCount ?? 0, positions: positions.rowCount ?? 0, fences: fences.rowCount ?? 0 };
}
