import { createHash } from "node:crypto";
import { coded, optionError } from "../shared/errors.js";

/** pg-boss's schema when `new PgBoss()` is given none. */
export const DEFAULT_PG_BOSS_SCHEMA = "pgboss";

/** What pg-boss runs its statements through (the `db` option of `send`, `complete`, `fail`, ...). */
export interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** Anything with node-postgres's `query`: a pool, a checked-out client, the handler's transaction. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** pg-boss statements run on `client`: inside its transaction when it has one open. */
export const executorOn = (client: Queryable): SqlExecutor => ({
  executeSql: (text, values) => client.query(text, values),
});

/** pg-boss's job table is not as this package reads it (another major, the wrong schema), found at start. */
export class PgBossSetupError extends TypeError {
  override name = "PgBossSetupError";
  declare readonly code: "MW_PGBOSS_SETUP";
  constructor(message: string) {
    super(message);
    coded(this, "MW_PGBOSS_SETUP");
  }
}

/**
 * The job id of a notification in a queue: a UUID (pg-boss's ids are) drawn from the queue name and
 * the notification id, so a redelivery finds its notification's job, and a worker running a
 * subscription's lane finds each waiting notification's job.
 */
export function jobIdFor(queue: string, notificationId: string): string {
  const hex = createHash("sha256").update(`merchant-webhooks\0${queue}\0${notificationId}`).digest("hex");
  // RFC 9562 version 8 (custom) with the RFC variant bits: a valid UUID whatever the hash.
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The columns of pg-boss 10's job (and archive) table a restored job keeps as they were. */
const RESTORED = `id, name, priority, data, state, retry_limit, retry_count, retry_delay, retry_backoff, start_after,
  started_on, singleton_key, singleton_on, expire_in, created_on, dead_letter, policy, output`;

/**
 * The statements on pg-boss's job table that its API has no call for: finding jobs without taking
 * them, and taking one named job inside the caller's transaction. pg-boss's own `fetch` commits a job
 * `active` and leaves it there until it expires (15 minutes by default) when its worker dies; taken
 * inside the handler's transaction, a job is `active` only to that transaction, and a dead worker's
 * job is back, untouched, the moment PostgreSQL rolls the transaction back. Written against the
 * job table of pg-boss 10 (the columns are checked once at start by `columns`).
 */
export function jobTable(schema: string) {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema))
    throw optionError(
      new TypeError(`pg-boss schema must be a plain SQL identifier, as pg-boss requires; got ${schema}`),
      "MW_INVALID_OPTION",
      "schema",
    );
  const job = `${schema}.job`;
  // The attempt pg-boss's `fetch` counts: every start after the first.
  const counted = "CASE WHEN started_on IS NOT NULL THEN retry_count + 1 ELSE retry_count END";
  return {
    job,
    /** Every column the statements below use: fails on a job table of another shape. */
    columns: `SELECT id, name, data, state, priority, start_after, started_on, created_on, retry_count, retry_limit
      FROM ${job} LIMIT 0`,
    /**
     * Jobs ready to run, as pg-boss's `fetch` orders them, leaving out those another worker's
     * transaction holds (running now) and `$3`, the ones this worker has in hand or put off.
     */
    ready: `SELECT id, data, (extract(epoch from created_on) * 1000)::float8 AS created_ms, ${counted} + 1 AS attempt
      FROM ${job}
      WHERE name = $1 AND state < 'active' AND start_after < now() AND NOT (id = ANY($3::uuid[]))
      ORDER BY priority DESC, created_on, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    /**
     * Take job `$2` in the open transaction, as `fetch` takes one (whatever its start time: a waiting notification
     * of a subscription runs in its turn). No row when it is gone, running or done.
     */
    take: `UPDATE ${job} SET state = 'active', started_on = now(), retry_count = ${counted}
      WHERE name = $1 AND id = $2 AND state < 'active'
      RETURNING data, (extract(epoch from created_on) * 1000)::float8 AS created_ms, retry_count, retry_limit`,
    /** A job's state and, when it waits to be retried, in how many ms it is due. */
    due: `SELECT state, greatest(0, extract(epoch from start_after - now()) * 1000)::float8 AS due_in_ms
      FROM ${job} WHERE name = $1 AND id = $2`,
    /**
     * Whether a redriven job (its data holds `redriven`, the failures it was redriven after) of order
     * key `$3` placed before `$4` (its position, a line feed, its id, compared as the lane
     * compares them) still waits in queue `$1`, other than `$2`: a redriven dead letter is not in its
     * key's lane, and runs only after the older ones.
     */
    olderRedriven: `SELECT 1 FROM ${job} WHERE name = $1 AND state < 'active' AND id <> $2 AND data ? 'redriven'
        AND data->'order'->>'key' = $3
        AND (coalesce(data->'order'->>'position', '') || E'\\n' || (data->>'id')) COLLATE "C" < $4::text COLLATE "C"
      LIMIT 1`,
    /**
     * Count a failed attempt on a job whose transaction rolled back (so it is not `active`), before
     * pg-boss's `fail` retries or dead-letters it; `$3` true makes it the last attempt.
     */
    countAttempt: `UPDATE ${job} SET started_on = now(), retry_count = ${counted},
        retry_limit = CASE WHEN $3::bool THEN ${counted} ELSE retry_limit END
      WHERE name = $1 AND id = $2 AND state < 'active'`,
    /** Make the run of job `$2`, taken in the open transaction, its last: `fail` then dead-letters it. */
    lastRun: `UPDATE ${job} SET retry_limit = retry_count WHERE name = $1 AND id = $2`,
    /**
     * Move the start of job `$2`, failed and waiting for its retry, to `$3` ms from now: the delay its
     * handler asked for (`RetryAfterError`), in place of pg-boss's back-off. No row when it is not
     * retried (out of attempts: dead-lettered).
     */
    retryIn: `UPDATE ${job} SET start_after = now() + $3::float8 * interval '1 millisecond'
      WHERE name = $1 AND id = $2 AND state = 'retry' RETURNING id`,
    /**
     * Settle job `$2` whose notification is settled already (completed, or its id taken by another
     * payload): completed, as pg-boss completes one, if it still waits. A job another worker completed
     * meanwhile is left as it is.
     */
    settle: `UPDATE ${job} SET state = 'completed', started_on = COALESCE(started_on, now()), completed_on = now()
      WHERE name = $1 AND id = $2 AND state < 'active'`,
    /**
     * Put back jobs of queue `$1` that pg-boss's maintenance archived while they still waited (past
     * their `keep_until`, 14 days by default): a notification's only copy, its record still queued
     * or failed. Back in the job table as they were, with a fresh retention as long as their first
     * (an hour at least). `$2` is one job's id, or null for all of the queue's. Answers the ids put back.
     */
    restore: `WITH gone AS (
        DELETE FROM ${schema}.archive WHERE name = $1 AND state < 'active' AND ($2::uuid IS NULL OR id = $2::uuid)
        RETURNING *)
      INSERT INTO ${job} (${RESTORED}, keep_until)
        SELECT ${RESTORED}, now() + GREATEST(keep_until - created_on, interval '1 hour') FROM gone
      ON CONFLICT DO NOTHING RETURNING id`,
    /**
     * Remove the waiting jobs of queue `$1` (a dead-letter queue) whose notification id is one of
     * `$2`, archived ones included. Answers the notification ids removed.
     */
    discard: `WITH gone AS (DELETE FROM ${job} WHERE name = $1 AND state < 'active' AND data->>'id' = ANY($2::text[])
        RETURNING data->>'id' AS id),
      archived AS (DELETE FROM ${schema}.archive WHERE name = $1 AND state < 'active' AND data->>'id' = ANY($2::text[])
        RETURNING data->>'id' AS id)
      SELECT id FROM gone UNION SELECT id FROM archived`,
    /** Jobs waiting in a queue (a dead-letter queue), oldest first, after the key (`$2`, `$3`) of the last page. */
    waiting: `SELECT id, data, created_on FROM ${job}
      WHERE name = $1 AND state < 'active' AND (created_on, id) > ($2::timestamptz, $3::uuid)
      ORDER BY created_on, id LIMIT $4`,
  };
}

export type JobTable = ReturnType<typeof jobTable>;
