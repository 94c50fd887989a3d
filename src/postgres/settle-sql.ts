import { CLAIM_SETTING, insideClaimSql, SEAL_SETTING, sealSql } from "./fence-sql.js";
import type { QualifiedNames } from "./names.js";
import { preparedStatement } from "./prepared.js";
import { literal } from "./sessions.js";

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
  const completeCall = (id: string, owner: string, answerJson: string, written: CompletedWrite) =>
    `CALL ${names.completeFunction}(${[
      literal(id),
      literal(owner),
      `${literal(answerJson)}::jsonb`,
      written.rowId === undefined ? "NULL" : literal(written.rowId),
      written.fingerprint === undefined ? "NULL" : literal(written.fingerprint),
      `${Number(retentionSeconds)}::float8`,
      written.eventType === undefined ? "NULL" : literal(written.eventType),
      written.subscriptionId === undefined ? "NULL" : literal(written.subscriptionId),
    ].join(", ")})`;
  const seal = preparedStatement("seal_v6", ["text", "text", "text"], sealStatementSql(names, "$1", "$2", "$3"));
  return {
    complete: completeSql(names, { id: "$1", owner: "$2", answer: "$3", live }),
    /**
     * The completion procedure's call, its arguments written in as literals (to ride with the COMMIT in
     * one simple-protocol message, which carries no parameters).
     */
    completeCall,
    /**
     * The completion of a record its claim wrote completed (`c`), answering as written: the seal's call
     * (see sealCallSql), alone or with the COMMIT in one message.
     */
    sealCall: (id: string, owner: string, rowId: string) => sealCallSql(names, id, owner, rowId),
    /** The seal prepared, on a connection whose first claim prepared it (see firstClaimStatement). */
    seal,
    sealExecute: (id: string, owner: string, rowId: string) =>
      `EXECUTE ${seal.name}(${literal(id)}, ${literal(owner)}, ${literal(rowId)})`,
    fail: settle("failed", "error = $3, waiting = false"),
    /**
     * `fail` for a run whose job fails with it, in its own transaction (`failWithin`): a dead letter,
     * or a stale run's failure. One that held its key (a lane's run in its turn, not a stale one) on a
     * lane that holds (`hold_on_dead_letter`, from the receiver's claim) stays waiting, failed: the head
     * of its lane, which waits for it (firstInLane answers `held`), written by the statement that fails it.
     */
    failInLane: settle(
      "failed",
      "error = $3, waiting = owned.holds_key AND owned.order_key IS NOT NULL AND coalesce(r.hold_on_dead_letter, false)",
    ),
    // A record queued in order stays in its key's lane.
    markQueued: settle("queued", "error = NULL", handedOver),
    /** `markQueued` waiting for the row's lock (bounded by the transaction's lock wait): see the store's `markQueued`. */
    markQueuedLocked: settle("queued", "error = NULL"),
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
     * delivery took the id meanwhile (its lock is free) and never over a completed record. The rollback
     * gave the record back as it was before the run: one waiting in a lane that holds stays waiting,
     * failed, holding the rest until it runs again; a dead letter holding its lane already is left as
     * it is. So is any failed record when the run found its job gone (`job_missing`: no handler ran): a
     * late look at a dead-lettered job (listed ready before another worker's last attempt failed it)
     * neither counts a run that never was nor moves or frees a dead letter holding its lane.
     */
    failAfterRollback: `WITH l AS (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS got)
      INSERT INTO ${records} AS r (id, order_key, position, holds_key, fingerprint, state, owner, attempts, error,
          event_type, subscription_id)
      SELECT $2, $3, $4, false, $5, 'failed', $6, $9, $10, $7, $8 FROM l WHERE l.got
      ON CONFLICT (id) DO UPDATE SET order_key = EXCLUDED.order_key, position = EXCLUDED.position, holds_key = false,
        fingerprint = EXCLUDED.fingerprint, state = 'failed', owner = EXCLUDED.owner, lease_until = NULL,
        attempts = EXCLUDED.attempts, answer = NULL, error = EXCLUDED.error,
        waiting = r.waiting AND coalesce(r.hold_on_dead_letter, false),
        updated_at = clock_timestamp(), event_type = coalesce(r.event_type, EXCLUDED.event_type),
        subscription_id = coalesce(r.subscription_id, EXCLUDED.subscription_id)
      WHERE r.state <> 'completed' AND NOT (r.state = 'failed' AND (r.waiting OR $10 = '${JOB_MISSING}'))`,
    /** The same for a waiting notification run from its subscription's list: its row is there, kept, and marked failed, as above. */
    failInLaneAfterRollback: `WITH l AS (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS got)
      UPDATE ${records} r SET state = 'failed', owner = $3, lease_until = NULL, holds_key = false,
        waiting = r.waiting AND coalesce(r.hold_on_dead_letter, false), attempts = $4, error = $5,
        updated_at = clock_timestamp()
      FROM l WHERE l.got AND r.id = $2 AND r.state <> 'completed' AND NOT (r.state = 'failed' AND (r.waiting OR $5 = '${JOB_MISSING}'))`,
    /** In the claim's own transaction: the run's number as the queue counts it (`countAttempt`). */
    setAttempt: `UPDATE ${records} SET attempts = $3 WHERE id = $1 AND owner = $2 AND state = 'processing'`,
    /**
     * In the claim's own transaction, its handler's writes rolled back: an ordered record whose
     * attempt failed and is retried after `$5` ms goes back to its place in its key's lane,
     * queued, its attempt and error kept, and the key stays held for `$2` until then, so no later
     * notification of the key runs before the retry.
     */
    requeueInLane: `WITH kept AS (UPDATE ${records} r SET state = 'queued', waiting = true, holds_key = false,
        lease_until = NULL, attempts = $3, error = $4, answer = NULL, updated_at = clock_timestamp()
      WHERE r.id = $1 AND r.owner = $2 AND r.state = 'processing' AND r.order_key IS NOT NULL RETURNING r.order_key),
      held AS (UPDATE ${positions} p SET owner = $2,
          lease_until = clock_timestamp() + $5::float8 * interval '1 millisecond', updated_at = clock_timestamp()
        FROM kept WHERE p.order_key = kept.order_key)
      SELECT count(*)::int AS n FROM kept`,
  };
}

export type SettleStatements = ReturnType<typeof settleStatements>;

/** What the claim wrote: the row it inserted, or nothing yet (then the record is written whole, with its fingerprint). */
export interface CompletedWrite {
  rowId?: string | undefined;
  fingerprint?: string | undefined;
  /** With `fingerprint`: what the claim told of the notification for the list (`ClaimRequest.listedAs`). */
  eventType?: string | undefined;
  subscriptionId?: string | undefined;
}

interface CompleteArguments {
  id: string;
  owner: string;
  answer: string;
  /** The condition a record's row meets while within retention. */
  live: string;
}

/**
 * Complete a record its owner holds in processing, and move its key forward (never back), letting go
 * of the key if the owner held it: one statement answering how many records changed (`n`). The job data
 * an in-process queue kept with it (`carried`, see kept-sql.ts) goes with its completion.
 */
function completeSql({ records, positions }: QualifiedNames, { id, owner, answer, live }: CompleteArguments) {
  return `WITH owned AS (SELECT id, order_key, position, holds_key FROM ${records}
        WHERE id = ${id} AND owner = ${owner} AND state IN ('processing') AND ${live} FOR UPDATE),
      changed AS (UPDATE ${records} r SET state = 'completed', answer = ${answer}, error = NULL, lease_until = NULL,
        holds_key = false, waiting = false, carried = NULL, updated_at = clock_timestamp() FROM owned WHERE r.id = owned.id
        RETURNING owned.order_key, owned.position),
      moved AS (INSERT INTO ${positions} AS p (order_key, position)
        SELECT order_key, position FROM changed WHERE order_key IS NOT NULL
        ON CONFLICT (order_key) DO UPDATE SET
          position = CASE WHEN EXCLUDED.position IS NOT NULL AND (p.position IS NULL OR p.position < EXCLUDED.position)
            THEN EXCLUDED.position ELSE p.position END,
          owner = CASE WHEN p.owner = ${owner} THEN NULL ELSE p.owner END,
          lease_until = CASE WHEN p.owner = ${owner} THEN NULL ELSE p.lease_until END,
          updated_at = clock_timestamp())
      SELECT count(*)::int AS n FROM changed`;
}

/** The error of a run whose job was gone (see run-job.ts): nothing ran, and a failed record stays as it was. */
const JOB_MISSING = "job_missing";

/** SQLSTATE the completion function raises when its claim's record is not there to complete. */
export const RECORD_NOT_FOUND = "P0002";

/**
 * The completion of a first delivery whose claim wrote its record completed already (the claim's
 * `p_answer`, or firstClaimStatement): a plain statement, no PL/pgSQL on the way (each statement inside a
 * PL/pgSQL function starts an executor of its own). It seals the transaction only while it runs in the
 * claim's own transaction (the claim's token still set) and finds the row there (by `ctid`, no index
 * read); otherwise it calls the refusal (refuseFunctionSql), which raises, so the COMMIT after it never
 * runs. The record is written once, by the claim.
 */
export const sealCallSql = (names: QualifiedNames, id: string, owner: string, rowId: string) =>
  sealStatementSql(names, literal(id), literal(owner), literal(rowId));

function sealStatementSql(names: QualifiedNames, id: string, owner: string, rowId: string): string {
  return `SELECT CASE WHEN current_setting('${CLAIM_SETTING}', true) = ${owner} AND EXISTS (SELECT 1 FROM ${names.records}
      WHERE ctid = ${rowId}::tid AND id = ${id} AND owner = ${owner} AND state = 'completed')
    THEN set_config('${SEAL_SETTING}', ${owner}, true) ELSE ${names.refuseFunction}(${id}, ${owner}) END`;
}

/**
 * Why a seal was refused, raised: outside the claim's transaction (the handler ended it), or its
 * record not found in it. Called only then, so no completion runs PL/pgSQL.
 */
export function refuseFunctionSql(names: QualifiedNames): string {
  return `CREATE OR REPLACE FUNCTION ${names.refuseFunction}(p_id text, p_owner text) RETURNS text
LANGUAGE plpgsql AS $refuse$
BEGIN
  ${insideClaimSql}
  RAISE EXCEPTION 'the claim''s record % was not found in its own transaction', p_id
    USING ERRCODE = '${RECORD_NOT_FOUND}';
END
$refuse$;`;
}

/**
 * Completion as a procedure, so it travels with the COMMIT in one message and answers no row (nothing
 * for the client to describe and parse; it raises when it fails): an unordered record its own
 * transaction wrote is found by `ctid` (`p_row_id`: a TID scan reads no index page, so a serializable
 * transaction takes no predicate lock other claims write into; one its claim wrote completed, for a run
 * that ends with another answer than it was written with, is rewritten); a first claim that wrote nothing
 * (`p_fingerprint` given) has its record written whole, completed, under the id's advisory lock its
 * transaction holds (a row there is one past retention, which counts as absent); any other is found as
 * `complete` finds it. A record not found raises, so the transaction is aborted and the COMMIT after it
 * never runs.
 */
export function completeFunctionSql(names: QualifiedNames): string {
  const live = "updated_at > clock_timestamp() - p_retention_s * interval '1 second'";
  return `CREATE OR REPLACE PROCEDURE ${names.completeFunction}(p_id text, p_owner text, p_answer jsonb, p_row_id text,
  p_fingerprint text, p_retention_s float8, p_event_type text, p_subscription_id text)
LANGUAGE plpgsql AS $complete$
DECLARE
  changed_rows integer;
BEGIN
  ${insideClaimSql}
  IF p_row_id IS NOT NULL THEN
    UPDATE ${names.records} SET state = 'completed', answer = p_answer, error = NULL, lease_until = NULL,
        holds_key = false, waiting = false, updated_at = clock_timestamp()
      WHERE ctid = p_row_id::tid AND id = p_id AND owner = p_owner AND state IN ('processing', 'completed')
        AND order_key IS NULL;
    GET DIAGNOSTICS changed_rows = ROW_COUNT;
  ELSIF p_fingerprint IS NOT NULL THEN
    INSERT INTO ${names.records} AS r (id, order_key, position, holds_key, fingerprint, state, owner, attempts, answer, waiting,
        event_type, subscription_id)
      VALUES (p_id, NULL, NULL, false, p_fingerprint, 'completed', p_owner, 1, p_answer, false, p_event_type, p_subscription_id)
      ON CONFLICT (id) DO UPDATE SET order_key = NULL, position = NULL, holds_key = false, fingerprint = EXCLUDED.fingerprint,
        state = 'completed', owner = EXCLUDED.owner, lease_until = NULL, attempts = 1, answer = EXCLUDED.answer,
        error = NULL, waiting = false, created_at = clock_timestamp(), updated_at = clock_timestamp(),
        event_type = EXCLUDED.event_type, subscription_id = EXCLUDED.subscription_id
      WHERE NOT (r.${live});
    GET DIAGNOSTICS changed_rows = ROW_COUNT;
  ELSE
    ${completeSql(names, { id: "p_id", owner: "p_owner", answer: "p_answer", live })} INTO changed_rows;
  END IF;
  IF changed_rows <> 1 THEN
    RAISE EXCEPTION 'the claim''s record % was not found in its own transaction', p_id
      USING ERRCODE = '${RECORD_NOT_FOUND}';
  END IF;
  ${sealSql}
END
$complete$;`;
}
