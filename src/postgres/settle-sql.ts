import type { QualifiedNames } from "./names.js";

/**
 * The statements that settle a claim, each one statement (so atomic without a transaction of its
 * own): the record changes only while `$2`, the owner token, still holds it in the expected state,
 * and the key's row is let go of (and, on completion, moved forward, never back) in the same statement.
 */
export function settleStatements(names: QualifiedNames, retentionSeconds: number) {
  const { records, positions } = names;
  const live = `updated_at > clock_timestamp() - ${retentionSeconds}::float8 * interval '1 second'`;
  const owned = (states: string, lock = "FOR UPDATE") =>
    `owned AS (SELECT id, order_key, position, holds_key FROM ${records}
      WHERE id = $1 AND owner = $2 AND state IN (${states}) AND ${live} ${lock})`;
  // A receiver's hand-over steps skip a row a worker's transaction holds: the worker took the claim
  // over (its job names the receiver's token), and waiting would hold the receiver's answer for the
  // worker's whole run.
  const handedOver = (states: string) => owned(states, "FOR UPDATE SKIP LOCKED");
  const letGo = (from: string) => `released AS (UPDATE ${positions} p SET owner = NULL, lease_until = NULL,
      updated_at = clock_timestamp() FROM ${from} WHERE p.order_key = ${from}.order_key AND p.owner = $2)`;
  const settle = (state: string, set: string, select = owned) => `WITH ${select("'processing'")},
    changed AS (UPDATE ${records} r SET state = '${state}', lease_until = NULL, holds_key = false,
      updated_at = clock_timestamp(), ${set} FROM owned WHERE r.id = owned.id RETURNING owned.order_key, owned.position),
    ${letGo("changed")}
    SELECT count(*)::int AS n FROM changed`;
  return {
    complete: `WITH ${owned("'processing'")},
      changed AS (UPDATE ${records} r SET state = 'completed', answer = $3, error = NULL, lease_until = NULL,
        holds_key = false, waiting = false, updated_at = clock_timestamp() FROM owned WHERE r.id = owned.id
        RETURNING owned.order_key, owned.position),
      moved AS (INSERT INTO ${positions} AS p (order_key, position)
        SELECT order_key, position FROM changed WHERE order_key IS NOT NULL
        ON CONFLICT (order_key) DO UPDATE SET
          position = CASE WHEN EXCLUDED.position IS NOT NULL AND (p.position IS NULL OR p.position < EXCLUDED.position)
            THEN EXCLUDED.position ELSE p.position END,
          owner = CASE WHEN p.owner = $2 THEN NULL ELSE p.owner END,
          lease_until = CASE WHEN p.owner = $2 THEN NULL ELSE p.lease_until END,
          updated_at = clock_timestamp())
      SELECT count(*)::int AS n FROM changed`,
    /**
     * `complete` for an unordered record its own transaction wrote, found by `ctid` ($4): a TID scan reads
     * no index page, so a serializable transaction takes no predicate lock other claims write into.
     */
    completeWritten: `UPDATE ${records} SET state = 'completed', answer = $3, error = NULL, lease_until = NULL,
        holds_key = false, waiting = false, updated_at = clock_timestamp()
      WHERE ctid = $4::tid AND id = $1 AND owner = $2 AND state = 'processing' AND order_key IS NULL
      RETURNING 1`,
    fail: settle("failed", "error = $3, waiting = false"),
    // A record queued in order stays in its key's waiting list.
    markQueued: settle("queued", "error = NULL", handedOver),
    release: `WITH ${handedOver("'processing', 'queued'")},
      gone AS (DELETE FROM ${records} r USING owned WHERE r.id = owned.id RETURNING owned.order_key),
      ${letGo("gone")}
      SELECT count(*)::int AS n FROM gone`,
    // A claim holding its key is lost with the key: if another claim holds the key now, nothing moves.
    extend: `WITH ${owned("'processing'")},
      kept AS (SELECT owned.* FROM owned WHERE NOT owned.holds_key OR NOT EXISTS (
        SELECT 1 FROM ${positions} p WHERE p.order_key = owned.order_key AND p.owner IS NOT NULL
          AND p.owner <> $2 AND p.lease_until > clock_timestamp())),
      changed AS (UPDATE ${records} r SET lease_until = clock_timestamp() + $3::float8 * interval '1 millisecond',
        updated_at = clock_timestamp() FROM kept WHERE r.id = kept.id RETURNING kept.order_key, kept.holds_key),
      held AS (UPDATE ${positions} p SET owner = $2,
        lease_until = clock_timestamp() + $3::float8 * interval '1 millisecond', updated_at = clock_timestamp()
        FROM changed WHERE changed.holds_key AND p.order_key = changed.order_key)
      SELECT count(*)::int AS n FROM changed`,
    /**
     * The failed attempt of a rolled-back transaction, written after the rollback. Only if no other
     * delivery took the id meanwhile (its lock is free) and never over a completed record.
     */
    failAfterRollback: `WITH l AS (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS got)
      INSERT INTO ${records} AS r (id, order_key, position, holds_key, fingerprint, state, owner, attempts, error)
      SELECT $2, $3, $4, false, $5, 'failed', $6, $7, $8 FROM l WHERE l.got
      ON CONFLICT (id) DO UPDATE SET order_key = EXCLUDED.order_key, position = EXCLUDED.position, holds_key = false,
        fingerprint = EXCLUDED.fingerprint, state = 'failed', owner = EXCLUDED.owner, lease_until = NULL,
        attempts = EXCLUDED.attempts, answer = NULL, error = EXCLUDED.error, waiting = false,
        updated_at = clock_timestamp()
      WHERE r.state <> 'completed'`,
    /** The same for a waiter run from its subscription's list: its row is there, kept, and marked failed. */
    failWaiterAfterRollback: `WITH l AS (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS got)
      UPDATE ${records} r SET state = 'failed', owner = $3, lease_until = NULL, holds_key = false, waiting = false,
        attempts = $4, error = $5, updated_at = clock_timestamp()
      FROM l WHERE l.got AND r.id = $2 AND r.state <> 'completed'`,
  };
}

export type SettleStatements = ReturnType<typeof settleStatements>;
