import { listedAsOf } from "../idempotency/listed-as.js";
import type { ClaimRequest } from "../idempotency/store.js";
import { FIRST_ANSWER } from "./claim-sql.js";
import { CLAIM_SETTING, fenceCall } from "./fence-sql.js";
import type { QualifiedNames } from "./names.js";
import { type PreparedStatement, preparedStatement } from "./prepared.js";
import { literal } from "./sessions.js";

/**
 * The claim of an unordered delivery at `read committed` (defersFirstWrite) as plain statements, with
 * no PL/pgSQL on its first-delivery and duplicate paths: in PostgreSQL every statement a PL/pgSQL
 * function runs starts an executor of its own, and the claim function's (the fence's update, the
 * record's insert, the read) cost the server more than the route's whole transaction (see
 * docs/internals/performance-notes.md). One data-modifying `WITH`, one executor:
 *
 * - the id's advisory lock tried (`l`, evaluated once: it is read twice);
 * - taken, the first delivery's record inserted completed with the run's usual answer
 *   (`ON CONFLICT DO NOTHING`, as the claim function's `p_answer` does), and, only when it was, the
 *   fence put up (its backend's row upserted and the claim's token set, as fence-sql.ts describes):
 *   a duplicate runs no handler and needs none;
 * - otherwise the record read, within retention. This read sees the table as the statement began,
 *   before the lock was taken: a delivery that committed in between is missed, a change to the row in
 *   between is not seen. So it answers only what no such commit can make wrong: a completed record
 *   (completed is final but for purge), or, the lock held elsewhere, whatever is there (the holder may
 *   commit any moment anyway).
 *
 * It answers as the claim function does (parseLook): `c` and the row's `ctid`, the record as a JSON
 * array, or `h` (held, no record); and `r` for the lock taken, nothing inserted and no completed record
 * seen, which readLockedSql then reads after the lock (the rare paths: a failed record's retry, a
 * record past retention, a commit between the statement's start and its lock).
 */
export function firstClaimStatement(
  names: QualifiedNames,
  retentionSeconds: number,
  reportsSession = false,
): FirstClaimStatement {
  // $1 the lock's key, $2 the id, $3 the fingerprint, $4 the owner token, $5 the event type and $6 the
  // subscription (for the list), $7 the server's bound in ms (see serverBound) or null: cast where it is
  // read, so that the text sent unprepared (`text`, its types read from it) means what the prepared one does.
  const lockKey = "hashtextextended($1, 0)";
  const bound = "$7::integer";
  // An ORM's transaction, which the store did not open, also tells its backend (to cancel a statement
  // of it) and the level it runs at (see orm-claim.ts).
  const session = reportsSession
    ? ", pg_backend_pid() AS pid, current_setting('transaction_isolation') AS isolation"
    : "";
  // The bound is set for the transaction's later statements, as `SET LOCAL` would.
  const text = `WITH l AS (SELECT pg_try_advisory_xact_lock(${lockKey}) AS locked,
    CASE WHEN ${bound} IS NOT NULL THEN set_config('statement_timeout', ${bound}::text, true) END AS statement_bound,
    CASE WHEN ${bound} IS NOT NULL THEN set_config('idle_in_transaction_session_timeout', ${bound}::text, true) END AS idle_bound),
  inserted AS (INSERT INTO ${names.records} (id, fingerprint, state, owner, attempts, answer, event_type, subscription_id)
    SELECT $2, $3, 'completed', $4, 1, '${FIRST_ANSWER}', $5, $6 FROM l WHERE l.locked
    ON CONFLICT (id) DO NOTHING RETURNING 'c' || ctid::text AS look),
  fenced AS (INSERT INTO ${names.fence} AS f (backend, token) SELECT pg_backend_pid(), $4 FROM inserted
    ON CONFLICT (backend) DO UPDATE SET token = EXCLUDED.token),
  -- Held by a transaction idle past the bound: the server's limit lifted from within, it ends now (fence-sql.ts).
  overdue AS (SELECT ${names.endOverdueFunction}(${lockKey}, ${bound}) FROM l WHERE NOT l.locked AND ${bound} IS NOT NULL)
SELECT coalesce(
  (SELECT look FROM inserted WHERE set_config('${CLAIM_SETTING}', $4, true) IS NOT NULL),
  (SELECT ${recordAsJson("l.locked")} FROM ${names.records} r
    WHERE r.id = $2 AND ${live(retentionSeconds)} AND (r.state = 'completed' OR NOT l.locked)),
  CASE WHEN l.locked THEN 'r' ELSE 'h' END) AS look${session}
FROM l LEFT JOIN overdue ON true`;
  const prepared = preparedStatement("claim_v6", ["text", "text", "text", "text", "text", "text", "integer"], text);
  return { ...prepared, text };
}

/** The first claim, to prepare (`PreparedStatement`) or to send as it is where it cannot be (`text`). */
export interface FirstClaimStatement extends PreparedStatement {
  /** The statement, its parameters `$1` to `$7` (firstClaimValues): planned again each time it is sent. */
  text: string;
}

/** The first claim's parameters, in order (see firstClaimStatement). */
export function firstClaimValues(
  names: QualifiedNames,
  request: ClaimRequest,
  boundMs: number | undefined,
): (string | number | null)[] {
  const listed = listedAsOf(request);
  return [
    names.lockPrefix + request.id,
    request.id,
    request.fingerprint,
    request.owner,
    listed?.eventType ?? null,
    listed?.subscriptionId ?? null,
    boundMs === undefined ? null : Math.round(boundMs),
  ];
}

/** The first claim's `EXECUTE`, its arguments written in as literals (see firstClaimStatement). */
export function firstClaimExecute(
  statement: PreparedStatement,
  names: QualifiedNames,
  request: ClaimRequest,
  boundMs: number | undefined,
): string {
  const args = firstClaimValues(names, request, boundMs).map((value) =>
    // The bound, a whole number the store computed: nothing that could end the literal.
    value === null ? "NULL" : typeof value === "number" ? `${value}` : literal(value),
  );
  return `EXECUTE ${statement.name}(${args.join(", ")})`;
}

/**
 * After the first claim answered `r`: the fence put up (a handler may run in this transaction now),
 * then the record read after the lock, for update, so that no earlier commit is missed: as the claim
 * function reads it once it holds the lock. `f` when there is none within retention.
 */
export function readLockedSql(names: QualifiedNames, retentionSeconds: number, request: ClaimRequest): string {
  return `${fenceCall(names, request.owner)}; ${lockedReadSql(names, retentionSeconds, request)}`;
}

/** readLockedSql's read alone, for an executor that answers one statement's rows (the fence sent before it). */
export function lockedReadSql(names: QualifiedNames, retentionSeconds: number, request: ClaimRequest): string {
  return `SELECT coalesce((SELECT ${recordAsJson("true")} FROM ${names.records} r
    WHERE r.id = ${literal(request.id)} AND ${live(retentionSeconds)} FOR UPDATE), 'f') AS look`;
}

const live = (retentionSeconds: number) =>
  `r.updated_at > clock_timestamp() - ${Number(retentionSeconds)}::float8 * interval '1 second'`;

/** The record as the claim function answers it (see parseLook): whether the lock was taken, then its fields. */
const recordAsJson = (locked: string) =>
  `json_build_array(${locked}, r.state, r.fingerprint, r.owner, r.attempts, r.answer, r.error,
      (extract(epoch from r.lease_until) * 1000)::float8, (extract(epoch from clock_timestamp()) * 1000)::float8)::text`;
