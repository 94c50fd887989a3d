import { isBefore } from "../idempotency/position.js";
import type { ClaimedOrStale, ClaimHandle } from "../idempotency/store.js";
import type { QualifiedNames } from "./names.js";
import type { Query } from "./sessions.js";

/**
 * A subscription's lane: its records flagged `waiting` (handed to a durable queue in order,
 * not yet run), first to run first by position (none first), then id, compared byte by byte as the
 * memory store compares `${position}\n${id}`.
 */
export function laneStatements(names: QualifiedNames, retentionSeconds: number) {
  const { records, positions } = names;
  const live = `updated_at > clock_timestamp() - ${retentionSeconds}::float8 * interval '1 second'`;
  const member = `(coalesce(position, '') || E'\\n' || id) COLLATE "C"`;
  return {
    /** The waiting notifications before `$3` (all, when null), other than `$2`, in order. */
    waiters: `SELECT id, state, position, (extract(epoch from lease_until) * 1000)::float8 AS lease_ms,
        (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms
      FROM ${records} WHERE order_key = $1 AND waiting AND id IS DISTINCT FROM $2 AND ${live}
        AND ($3::text IS NULL OR ${member} < $3::text COLLATE "C")
      ORDER BY ${member}`,
    leave: `UPDATE ${records} SET waiting = false WHERE id = $1`,
    /**
     * The record (other than `$2`) whose claim held the key and lapsed with it: its owner died, or lost
     * its lease. Back into the list at its position, so it runs before newer ones instead of after them
     * as stale. Only a claim made outside a transaction can be left so: a worker's transaction that
     * dies is rolled back by the database, which restores the record as it was.
     */
    returnLapsedHolder: `UPDATE ${records} AS r SET state = 'queued', waiting = true, holds_key = false,
        lease_until = NULL, updated_at = clock_timestamp()
      FROM ${positions} AS p
      WHERE p.order_key = $1 AND r.order_key = $1 AND r.id IS DISTINCT FROM $2 AND r.state = 'processing'
        AND r.holds_key AND r.owner = p.owner AND r.lease_until <= clock_timestamp()
        AND p.lease_until <= clock_timestamp() AND r.${live}`,
    /** The waiting notification's own lock and row, read afresh once locked. */
    lockLaneHead: "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked",
    readLaneHead: `SELECT position, attempts FROM ${records} WHERE id = $1 AND waiting AND state = 'queued' AND ${live} FOR UPDATE`,
    runFromLane: `UPDATE ${records} SET state = 'processing', owner = $2,
        lease_until = clock_timestamp() + $3::float8 * interval '1 millisecond', attempts = attempts + 1,
        waiting = false, holds_key = $4, error = NULL, updated_at = clock_timestamp()
      WHERE id = $1 RETURNING attempts`,
    /** A worker's own record, left waiting in the list while it runs an older one. */
    waitQueued: `INSERT INTO ${records} AS r
        (id, order_key, position, holds_key, fingerprint, state, owner, lease_until, attempts, waiting)
      VALUES ($1, $2, $3, false, $4, 'queued', $5, NULL, $6, true)
      ON CONFLICT (id) DO UPDATE SET order_key = EXCLUDED.order_key, position = EXCLUDED.position, holds_key = false,
        fingerprint = EXCLUDED.fingerprint, state = 'queued', owner = EXCLUDED.owner, lease_until = NULL,
        attempts = EXCLUDED.attempts, answer = NULL, error = NULL, waiting = true, updated_at = clock_timestamp()`,
    holdKey: `UPDATE ${positions} SET owner = $2, lease_until = clock_timestamp() + $3::float8 * interval '1 millisecond',
      updated_at = clock_timestamp() WHERE order_key = $1`,
    /** The dead letter holding the key's lane (failed, still waiting: see settle-sql.ts), if one does. */
    heldBy: `SELECT id FROM ${records} WHERE order_key = $1 AND waiting AND state = 'failed' AND ${live}
      ORDER BY ${member} LIMIT 1`,
    /**
     * The lanes held by a dead letter: how many, and the one held longest (its key, its dead letter,
     * since when, in epoch ms), read from the index of held dead letters alone (migration step 4).
     */
    heldLanes: `WITH held AS (SELECT order_key, id, updated_at FROM ${records}
        WHERE waiting AND state = 'failed' AND ${live})
      SELECT (SELECT count(DISTINCT order_key)::int FROM held) AS lanes, oldest.order_key, oldest.id,
        (extract(epoch from oldest.updated_at) * 1000)::float8 AS since_ms
      FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT * FROM held ORDER BY updated_at LIMIT 1) oldest ON true`,
    lockPrefix: names.lockPrefix,
  };
}

export type LaneStatements = ReturnType<typeof laneStatements>;

interface LaneHeadRow {
  id: string;
  state: string;
  position: string | null;
  lease_ms: number | null;
  now_ms: number;
}

/**
 * The waiting notification to run first: `own` (the caller's own record is first), `busy`, `held` (a dead letter of a
 * lane that holds is first: only its own job's claim, once redriven, takes it), or one ready to run.
 */
export type FirstInLane = "own" | "busy" | "held" | { id: string } | undefined;

/**
 * The first of the key's lane that can run now, after putting back in line a holder whose
 * claim lapsed (`returnLapsedHolder`), dropping waiting notifications whose receiver died before
 * marking them queued (a lapsed processing lease); `busy` when the first is still being handed to the
 * queue or another process is deciding about it; `held` when it is a dead letter holding the lane. With `own`, the caller's own record counts as ready
 * at its place in the list. Runs under the key's row lock.
 */
export async function firstInLane(
  query: Query,
  sql: LaneStatements,
  key: string,
  own?: { id: string; position: string | undefined },
): Promise<FirstInLane> {
  await query(sql.returnLapsedHolder, [key, own?.id ?? null]);
  const before = own ? `${own.position ?? ""}\n${own.id}` : null;
  const rows = await query<LaneHeadRow>(sql.waiters, [key, own?.id ?? null, before]);
  for (const row of rows) {
    if (row.state === "queued") return { id: row.id };
    if (row.state === "processing" && row.lease_ms !== null && row.lease_ms > row.now_ms) return "busy";
    // Only a lane that holds keeps a failed record waiting (see settle-sql.ts): it waits for a person.
    if (row.state === "failed") return "held";
    await query(sql.leave, [row.id]);
  }
  return own ? "own" : undefined;
}

/**
 * Claim waiting notification `id` of `key` for `owner`, holding the key unless it turned stale. Its id's lock is
 * tried first: held, another process is deciding about it right now, and the answer is `busy`.
 */
export async function runFromLane(
  query: Query,
  sql: LaneStatements,
  id: string,
  key: string,
  owner: string,
  leaseMs: number,
  newest: string | undefined,
): Promise<ClaimedOrStale | "busy"> {
  const [lock] = await query<{ locked: boolean }>(sql.lockLaneHead, [sql.lockPrefix + id]);
  if (!lock!.locked) return "busy";
  const [waiter] = await query<{ position: string | null }>(sql.readLaneHead, [id]);
  if (!waiter) return "busy";
  const position = waiter.position ?? undefined;
  const stale = position !== undefined && newest !== undefined && isBefore(position, newest);
  const [run] = await query<{ attempts: number }>(sql.runFromLane, [id, owner, leaseMs, !stale]);
  const handle: ClaimHandle = { id, owner, order: position !== undefined ? { key, position } : { key } };
  const attempt = run!.attempts;
  if (stale) return { status: "stale", ...handle, attempt, newestPosition: newest! };
  await query(sql.holdKey, [key, owner, leaseMs]);
  return newest === undefined
    ? { status: "claimed", ...handle, attempt }
    : { status: "claimed", ...handle, attempt, previousPosition: newest };
}
