import type { Logger } from "pino";
import type { JobTable, SqlExecutor } from "./job-table.js";

/** How often a worker looks for jobs of its queues that pg-boss archived while they waited. */
export const RESTORE_EVERY_MS = 60_000;

/**
 * Put back the jobs of `queues` that pg-boss's retention archived while they still waited. A job
 * waiting past its `keep_until` (a backlog no worker ran for 14 days, a dead letter nobody redrove)
 * is moved to pg-boss's archive, still `created`: nothing runs it from there, and its record would
 * stay queued (or failed, with no dead letter to redrive) for good. Answers how many came back.
 */
export async function restoreArchived(db: SqlExecutor, table: JobTable, queues: readonly string[]): Promise<number> {
  let restored = 0;
  for (const queue of queues) restored += (await db.executeSql(table.restore, [queue, null])).rows.length;
  return restored;
}

/** `restoreArchived` for a worker: every `RESTORE_EVERY_MS` at most, what it did logged, a failure only warned of. */
export function restoringEvery(db: () => SqlExecutor, table: JobTable, queues: readonly string[], logger: Logger) {
  let next = 0;
  return async (): Promise<void> => {
    if (Date.now() < next) return;
    next = Date.now() + RESTORE_EVERY_MS;
    try {
      const restored = await restoreArchived(db(), table, queues);
      if (restored > 0)
        logger.warn(
          { queues, restored },
          "jobs pg-boss archived while they waited (past their retention) were put back in their queue",
        );
    } catch (err) {
      logger.warn({ err, queues }, "could not look for jobs pg-boss archived while they waited; trying again later");
    }
  };
}
