import type { QualifiedNames } from "./names.js";
import { literal } from "./sessions.js";

/**
 * The fence around a handler's transaction, kept by PostgreSQL itself rather than by reading the
 * handler's statements: whatever the handler sends (several statements in one string, a comment the
 * guard reads otherwise, a `pg.Query`, the raw connection), the claim's transaction commits only
 * through its completion, and the completion lands only in the claim's transaction.
 *
 * - The claim sets `merchant_webhooks.claim` to its owner token for the transaction only (as `SET
 *   LOCAL` does): any `COMMIT` or `ROLLBACK` resets it, and the completion raises unless it still
 *   reads the claim's token, so it never completes a record outside the transaction that holds the
 *   handler's effects (nor answers 200 for effects a `ROLLBACK` took away).
 * - The claim also writes its backend's row of the fence table (unlogged, one row per backend, updated
 *   in place), whose deferred constraint trigger runs as the transaction commits: it refuses the
 *   commit unless the completion (or the library's own commit of a claim handed to a queue or not
 *   run) has sealed the transaction with the same token in `merchant_webhooks.sealed`. A `COMMIT` the
 *   handler sends fails, and the whole transaction rolls back: nothing of the run is kept early.
 * - The server's bound on a handler's transaction (`idle_in_transaction_session_timeout`, set by the
 *   claim) is the transaction's own setting, which the handler can lift (`RESET ALL`, `SET LOCAL ... =
 *   0`). So the next delivery of the id enforces it too: a claim that finds the id held by a backend
 *   idle in its transaction for longer than the claim's own bound terminates that backend (the
 *   holder is frozen, or its handler hangs past its time limit), and the id is free for its retry.
 */

/** The transaction-local setting that holds the claim's token while its transaction is the claim's. */
export const CLAIM_SETTING = "merchant_webhooks.claim";
/** The transaction-local setting the library's own commit of a claim's transaction sets first. */
export const SEAL_SETTING = "merchant_webhooks.sealed";

/** SQLSTATE of a commit of a claim's transaction that its completion did not seal (the handler's `COMMIT`). */
export const UNSEALED_COMMIT = "25M01";
/** SQLSTATE of a completion outside its claim's transaction (the handler ended that transaction). */
export const OUTSIDE_CLAIM = "25M02";

/** The library's own commit of a claim's transaction: sealed with the claim's token, then `COMMIT`, one message. */
export const sealedCommit = (token: string) => `SELECT set_config('${SEAL_SETTING}', ${literal(token)}, true); COMMIT`;

/** The fence put up by a statement of its own, for a transaction that does not begin with the claim function. */
export const fenceCall = (names: QualifiedNames, token: string) => `SELECT ${names.fenceFunction}(${literal(token)})`;

/** The fence's table, its trigger and the function that puts it up, as `migrate()` installs them. */
export function fenceSql(names: QualifiedNames): string {
  const trigger = `"${names.table}_fence_sealed"`;
  return `CREATE UNLOGGED TABLE IF NOT EXISTS ${names.fence} (
  backend integer PRIMARY KEY,
  token text NOT NULL
);

CREATE OR REPLACE FUNCTION ${names.fenceCheckFunction}() RETURNS trigger
LANGUAGE plpgsql AS $fence$
BEGIN
  IF current_setting('${SEAL_SETTING}', true) IS DISTINCT FROM NEW.token THEN
    RAISE EXCEPTION 'this transaction holds a notification''s claim: only its completion commits it'
      USING ERRCODE = '${UNSEALED_COMMIT}',
        HINT = 'ctx.transaction is committed by merchant-webhooks after the handler returns; use SAVEPOINT and ROLLBACK TO SAVEPOINT for a part to undo';
  END IF;
  RETURN NULL;
END
$fence$;

DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${names.fence}'::regclass AND tgname = '${trigger.slice(1, -1)}') THEN
    CREATE CONSTRAINT TRIGGER ${trigger} AFTER INSERT OR UPDATE ON ${names.fence}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${names.fenceCheckFunction}();
    -- Also under session_replication_role = replica: a handler's setting never lifts the fence.
    ALTER TABLE ${names.fence} ENABLE ALWAYS TRIGGER ${trigger};
  END IF;
END $$;

-- The backend holding advisory lock p_key (a one-key lock: its high and low halves), if idle in its
-- transaction for longer than p_bound_ms, terminated. A backend of another role this one may not
-- signal is left to its own limits.
CREATE OR REPLACE FUNCTION ${names.endOverdueFunction}(p_key bigint, p_bound_ms integer) RETURNS void
LANGUAGE plpgsql AS $overdue$
DECLARE
  holder integer;
BEGIN
  SELECT a.pid INTO holder FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid = ((p_key >> 32) & 4294967295)::oid AND l.objid = (p_key & 4294967295)::oid AND l.objsubid = 1
      AND a.state IN ('idle in transaction', 'idle in transaction (aborted)')
      AND a.state_change < clock_timestamp() - p_bound_ms * interval '1 millisecond';
  IF holder IS NOT NULL THEN
    BEGIN
      PERFORM pg_terminate_backend(holder);
    EXCEPTION WHEN insufficient_privilege THEN
      NULL;
    END;
  END IF;
END
$overdue$;

CREATE OR REPLACE FUNCTION ${names.fenceFunction}(p_token text) RETURNS void
LANGUAGE plpgsql AS $fence$
BEGIN
  PERFORM set_config('${CLAIM_SETTING}', p_token, true);
  -- The backend's row is there but for its first claim: an update in place, no speculative insert.
  -- Not at serializable, where the update's read of the index would take a predicate lock that the
  -- other backends' first inserts write into (serialization failures): there the upsert reads nothing.
  IF current_setting('transaction_isolation') <> 'serializable' THEN
    UPDATE ${names.fence} SET token = p_token WHERE backend = pg_backend_pid();
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  INSERT INTO ${names.fence} AS f (backend, token) VALUES (pg_backend_pid(), p_token)
    ON CONFLICT (backend) DO UPDATE SET token = EXCLUDED.token;
END
$fence$;`;
}

/** The completion's first step: raise unless it runs in the claim's own transaction (`p_owner` its token). */
export const insideClaimSql = `IF current_setting('${CLAIM_SETTING}', true) IS DISTINCT FROM p_owner THEN
    RAISE EXCEPTION 'the completion of % ran outside its claim''s transaction: the handler ended that transaction', p_id
      USING ERRCODE = '${OUTSIDE_CLAIM}';
  END IF;`;

/** The completion's last step: the transaction is the completion's to commit. */
export const sealSql = `PERFORM set_config('${SEAL_SETTING}', p_owner, true);`;
