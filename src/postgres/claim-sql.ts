import type { ClaimFlags } from "../idempotency/claim-flags.js";
import { listedAsOf } from "../idempotency/listed-as.js";
import { isBefore } from "../idempotency/position.js";
import type {
  ClaimedOrStale,
  ClaimHandle,
  ClaimResult,
  IdempotencyRecord,
  RecordState,
  StoredAnswer,
} from "../idempotency/store.js";
import { firstInLane, laneStatements, runFromLane } from "./lane-sql.js";
import type { QualifiedNames } from "./names.js";
import { LOCK_NOT_AVAILABLE, literal, type Query, sqlState } from "./sessions.js";

/**
 * Where a claim wrote its new record (`ctid`): its own transaction can settle it without an index read.
 * `completed`: that record was written completed, answering `FIRST_ANSWER` (see claimFunctionSql).
 * `unwritten`: a first claim that wrote nothing yet, its record to be written whole as the run ends.
 */
export interface WrittenRow {
  rowId?: string;
  completed?: boolean;
  unwritten?: boolean;
  /** Claimed by the prepared first claim, which prepared the seal on the same connection (see firstClaimStatement). */
  prepared?: boolean;
}

/**
 * The answer a first delivery's record is written with by its claim (the run's usual answer: a handler
 * ran and returned, run-claimed.ts). A run that ends with another answer rewrites it in its completion.
 */
export const FIRST_ANSWER = JSON.stringify({ processed: true, message: "processed" });

/** A record row as the claim reads it; times are epoch ms on the database's clock. */
export interface RecordRow {
  state: RecordState;
  fingerprint: string;
  owner: string | null;
  attempts: number;
  answer: StoredAnswer | null;
  error: string | null;
  lease_ms: number | null;
  now_ms: number;
}

/** The statements one inbox's claims run, with its table names and retention filled in. */
export function claimStatements(names: QualifiedNames, retentionSeconds: number) {
  const { records, positions } = names;
  // A record past retention counts as absent everywhere, as if it had been purged already.
  const live = `updated_at > clock_timestamp() - ${retentionSeconds}::float8 * interval '1 second'`;
  const columns = `state, fingerprint, owner, attempts, answer, error,
    (extract(epoch from lease_until) * 1000)::float8 AS lease_ms,
    (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms`;
  return {
    // The claim's first statement: the function `migrate()` installs (see claimFunctionSql).
    look: `SELECT ${names.claimFunction}($1, $2, $3, $4, $5::float8, ${retentionSeconds}::float8, $6, NULL, false, $7, $8, NULL) AS look`,
    retentionSeconds,
    claimFunction: names.claimFunction,
    // Taking the key's row lock (an upsert locks the row as FOR UPDATE does) and reading it in one statement.
    lockKey: `INSERT INTO ${positions} AS p (order_key) VALUES ($1)
      ON CONFLICT (order_key) DO UPDATE SET order_key = p.order_key
      RETURNING position, owner,
        (extract(epoch from lease_until) * 1000)::float8 AS lease_ms,
        (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms`,
    // The key's row read as committed, without its lock: a receiver handing a notification to a queue
    // only checks staleness, and must not wait for a worker whose transaction holds the row for a run.
    readKey: `SELECT position, owner, (extract(epoch from lease_until) * 1000)::float8 AS lease_ms,
        (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms
      FROM ${positions} WHERE order_key = $1`,
    // A record taken over is claimed afresh, without the job data an in-process queue kept with the one before.
    // What the first claim told of the notification for the list (`$10`, `$11`) is kept (see listedAsOf),
    // and so is the lane's dead-letter policy a receiver's claim gives (`$12`; null from any other claim).
    upsert: `INSERT INTO ${records} AS r
        (id, order_key, position, holds_key, fingerprint, state, owner, lease_until, attempts, answer, error, waiting,
          event_type, subscription_id, hold_on_dead_letter)
      VALUES ($1, $2, $3, $4, $5, 'processing', $6, clock_timestamp() + $7::float8 * interval '1 millisecond', $8, NULL, NULL, $9,
        $10, $11, $12)
      ON CONFLICT (id) DO UPDATE SET order_key = EXCLUDED.order_key, position = EXCLUDED.position,
        holds_key = EXCLUDED.holds_key, waiting = EXCLUDED.waiting, fingerprint = EXCLUDED.fingerprint, state = 'processing',
        owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, attempts = EXCLUDED.attempts,
        answer = NULL, error = NULL, carried = NULL, updated_at = clock_timestamp(),
        event_type = coalesce(r.event_type, EXCLUDED.event_type),
        subscription_id = coalesce(r.subscription_id, EXCLUDED.subscription_id),
        hold_on_dead_letter = coalesce(EXCLUDED.hold_on_dead_letter, r.hold_on_dead_letter)`,
    holdKey: `UPDATE ${positions} SET owner = $2, lease_until = clock_timestamp() + $3::float8 * interval '1 millisecond',
      updated_at = clock_timestamp() WHERE order_key = $1`,
    get: `SELECT ${columns} FROM ${records} WHERE id = $1 AND ${live}`,
    lockPrefix: names.lockPrefix,
    waiting: laneStatements(names, retentionSeconds),
  };
}

export type ClaimStatements = ReturnType<typeof claimStatements>;

/**
 * The claim's first statement as a function, so it is one round trip: the id's advisory lock tried,
 * then, taken for an unordered claim, the first claim's row inserted at once; otherwise the record
 * read (for update once the lock is held, so no earlier commit is missed). A first claim reads no row
 * before writing it: a serializable transaction takes no predicate lock on the index gap, which every
 * concurrent first claim nearby would write into. `p_bound_ms`, when given, bounds the rest of the
 * transaction's statements and idle time on the server (as `SET LOCAL` would: see transactional-claim.ts);
 * `p_fence`, for a claim whose handler runs in this transaction, puts up its fence (see fence-sql.ts).
 * `p_answer`, for a first claim at `read committed` whose record is written once (defersFirstWrite),
 * writes that record at once, completed with that answer: it commits only with the handler's effects,
 * and its completion is then the seal alone (see sealCallSql), no second statement on the record.
 *
 * It answers one text, so the common answers cost the client one short column to parse rather than a
 * row of ten (see parseLook): `w` and the inserted row's `ctid` (its own transaction completes it without
 * an index read); `c` and the `ctid` of the row inserted completed; `f` for the lock taken and no record;
 * `h` for the lock held elsewhere and no record; otherwise the record as a JSON array, with whether the
 * lock was taken first.
 */
export function claimFunctionSql(names: QualifiedNames): string {
  const { records } = names;
  const read = (lock: string) => `SELECT json_build_array(locked, r.state, r.fingerprint, r.owner, r.attempts, r.answer,
        r.error, (extract(epoch from r.lease_until) * 1000)::float8, (extract(epoch from clock_timestamp()) * 1000)::float8)::text
      INTO look
      FROM ${records} r
      WHERE r.id = p_id AND r.updated_at > clock_timestamp() - p_retention_s * interval '1 second' ${lock};`;
  return `CREATE OR REPLACE FUNCTION ${names.claimFunction}(p_lock text, p_id text, p_fingerprint text, p_owner text,
  p_lease_ms float8, p_retention_s float8, p_insert boolean, p_bound_ms integer, p_fence boolean,
  p_event_type text, p_subscription_id text, p_answer jsonb)
RETURNS text
LANGUAGE plpgsql AS $claim$
DECLARE
  locked boolean;
  look text;
BEGIN
  -- Assignments, not PERFORM: an expression alone is evaluated directly, a PERFORM runs the executor.
  IF p_bound_ms IS NOT NULL THEN
    look := set_config('statement_timeout', p_bound_ms::text, true);
    look := set_config('idle_in_transaction_session_timeout', p_bound_ms::text, true);
    look := NULL;
  END IF;
  locked := pg_try_advisory_xact_lock(hashtextextended(p_lock, 0));
  -- A claim run in its own transaction fences it once it holds the id (see fence-sql.ts).
  IF locked AND p_fence THEN
    PERFORM ${names.fenceFunction}(p_owner);
  ELSIF p_fence AND p_bound_ms IS NOT NULL THEN
    -- Held: by a transaction idle past the bound, the server's own limit lifted from within, it ends now.
    PERFORM ${names.endOverdueFunction}(hashtextextended(p_lock, 0), p_bound_ms);
  END IF;
  -- A first delivery's record, written once: completed (its row and index entries are written here
  -- rather than by the completion, which only seals). A row there (past retention) is left to the read.
  IF locked AND p_answer IS NOT NULL THEN
    INSERT INTO ${records} (id, fingerprint, state, owner, attempts, answer, event_type, subscription_id)
      VALUES (p_id, p_fingerprint, 'completed', p_owner, 1, p_answer, p_event_type, p_subscription_id)
      ON CONFLICT (id) DO NOTHING
      RETURNING 'c' || ctid::text INTO look;
    IF look IS NOT NULL THEN
      RETURN look;
    END IF;
  END IF;
  IF locked AND p_insert THEN
    INSERT INTO ${records} (id, order_key, position, holds_key, fingerprint, state, owner, lease_until, attempts, waiting,
        event_type, subscription_id)
      VALUES (p_id, NULL, NULL, false, p_fingerprint, 'processing', p_owner,
        clock_timestamp() + p_lease_ms * interval '1 millisecond', 1, false, p_event_type, p_subscription_id)
      ON CONFLICT (id) DO NOTHING
      RETURNING 'w' || ctid::text INTO look;
    IF look IS NOT NULL THEN
      RETURN look;
    END IF;
  END IF;
  IF locked THEN
    ${read("FOR UPDATE")}
  ELSE
    ${read("")}
  END IF;
  RETURN coalesce(look, CASE WHEN locked THEN 'f' ELSE 'h' END);
END
$claim$;`;
}

/** The claim function's answer, read: whether the lock was taken, the inserted row, or the record read. */
export interface ClaimLook {
  locked: boolean;
  /** The first claim's row, inserted by the function (its `ctid`). */
  rowId?: string;
  /** That row was inserted completed (`p_answer`). */
  completed?: boolean;
  /** The record read; none when there is none within retention. */
  row?: RecordRow;
  /** The lock taken, and the record still to be read after it (firstClaimStatement's `r`). */
  unread?: boolean;
}

/** The claim function's one text (see claimFunctionSql) as a ClaimLook. */
export function parseLook(look: string): ClaimLook {
  switch (look[0]) {
    case "w":
      return { locked: true, rowId: look.slice(1) };
    case "c":
      return { locked: true, rowId: look.slice(1), completed: true };
    case "f":
      return { locked: true };
    case "h":
      return { locked: false };
    case "r":
      return { locked: true, unread: true };
  }
  const [locked, state, fingerprint, owner, attempts, answer, error, lease_ms, now_ms] = JSON.parse(look) as [
    boolean,
    ...RecordTuple,
  ];
  return { locked, row: { state, fingerprint, owner, attempts, answer, error, lease_ms, now_ms } };
}

type RecordTuple = [
  RecordRow["state"],
  RecordRow["fingerprint"],
  RecordRow["owner"],
  RecordRow["attempts"],
  RecordRow["answer"],
  RecordRow["error"],
  RecordRow["lease_ms"],
  RecordRow["now_ms"],
];

/** The claim function's arguments but the retention (the store's, written into the statement). */
const lookValues = (
  sql: ClaimStatements,
  request: ClaimFlags,
  insert = true,
  { id, fingerprint, owner, leaseMs, order } = request,
  listed = listedAsOf(request),
) =>
  [
    sql.lockPrefix + id,
    id,
    fingerprint,
    owner,
    leaseMs,
    insert && order === undefined,
    listed?.eventType ?? null,
    listed?.subscriptionId ?? null,
  ] as const;

/**
 * The claim function's call with its arguments written in as literals, to follow `BEGIN` in one
 * simple-protocol message (which carries no parameters). The strings are quoted as PostgreSQL reads
 * them; the numbers are the store's own.
 */
export function lookInline(
  sql: ClaimStatements,
  request: ClaimFlags,
  boundMs: number | undefined,
  deferWrite: boolean,
): string {
  const [lock, id, fingerprint, owner, leaseMs, insert, eventType, subscriptionId] = lookValues(
    sql,
    request,
    !deferWrite,
  );
  const args = [literal(lock), literal(id), literal(fingerprint), literal(owner)];
  // A number written as JavaScript writes it: digits, a sign, a point, an exponent (or NaN, which the
  // server refuses as an unknown column): nothing that could end the literal.
  args.push(`${Number(leaseMs)}::float8`, `${Number(sql.retentionSeconds)}::float8`, insert ? "true" : "false");
  args.push(boundMs === undefined ? "NULL" : `${Math.round(boundMs)}`, "true");
  args.push(
    eventType === null ? "NULL" : literal(eventType),
    subscriptionId === null ? "NULL" : literal(subscriptionId),
    // The store's own constant, no quote in it.
    deferWrite ? `'${FIRST_ANSWER}'` : "NULL",
  );
  return `SELECT ${sql.claimFunction}(${args.join(", ")}) AS look`;
}

/** Retry-After of a 409 for an id whose claim lives in an open transaction, with no lease to count down. */
export const HELD_RETRY_MS = 1_000;

/** How long a claim waits on a key's row lock before answering that the key is busy. */
export const KEY_LOCK_WAIT_MS = 200;

/**
 * The lock-wait limit a claim's transaction needs: only an ordered claim waits on a row another
 * transaction may hold for a handler's whole run (its key's). An unordered claim reads its record's
 * row for update only once it holds the id's advisory lock, so nobody holds that row for long.
 */
export const lockWaitFor = (request: ClaimFlags) => (request.order ? KEY_LOCK_WAIT_MS : undefined);

/**
 * Claim inside an open transaction on `query`. The id's advisory lock is tried, never waited for:
 * held, it means another delivery of the id is running in its own transaction (or deciding right
 * now), and the answer is the committed record's, or `processing`. Taken, the record is read afresh
 * (after the lock, so no earlier commit is missed) and decided as every store decides it.
 */
export async function claimIn(
  query: Query,
  sql: ClaimStatements,
  request: ClaimFlags,
  written?: WrittenRow,
  looked?: ClaimLook,
  deferWrite = false,
): Promise<ClaimResult> {
  const { id, fingerprint, owner, leaseMs, takeQueued, order, handoffFrom, forQueue } = request;
  const look = looked ?? parseLook((await query<{ look: string }>(sql.look, [...lookValues(sql, request)]))[0]!.look);
  if (look.rowId !== undefined) {
    if (written) {
      written.rowId = look.rowId;
      written.completed = look.completed;
    }
    return { status: "claimed", id, owner, attempt: 1 };
  }
  const { row } = look;
  // The id's lock taken and no record: a first claim, written whole when its run ends (see deferredFirstWrite).
  if (deferWrite && written && look.locked && row === undefined) {
    written.unwritten = true;
    return { status: "claimed", id, owner, attempt: 1 };
  }
  if (row?.state === "completed")
    return row.fingerprint === fingerprint ? { status: "completed", answer: row.answer! } : { status: "conflict" };
  if (!look.locked) {
    if (row?.state === "queued" && !takeQueued && row.fingerprint === fingerprint) return { status: "queued" };
    // No committed lease: the id is held by a transaction running its handler right now, which ends
    // with it (commit, rollback, or the server's bound on it); ask again shortly rather than after a lease.
    return { status: "processing", retryAfterMs: leaseLeft(row) ?? Math.min(leaseMs, HELD_RETRY_MS) };
  }
  const handedOver = takeQueued && handoffFrom !== undefined && row?.owner === handoffFrom;
  const left = leaseLeft(row);
  if (row?.state === "processing" && left !== undefined && !handedOver)
    return { status: "processing", retryAfterMs: left };
  if (row?.state === "queued" && !takeQueued)
    return row.fingerprint === fingerprint ? { status: "queued" } : { status: "processing", retryAfterMs: leaseMs };

  let newestPosition: string | undefined;
  let stale = false;
  if (order) {
    let key: KeyRow | undefined;
    // Bound for a queue, the claim joins the key's lane whoever holds the key: it reads the position
    // committed so far (a worker checks staleness again when it runs it) and never waits for the row.
    if (forQueue) [key] = await query<KeyRow>(sql.readKey, [order.key]);
    else
      try {
        [key] = await query<KeyRow>(sql.lockKey, [order.key]);
      } catch (err) {
        if (sqlState(err) !== LOCK_NOT_AVAILABLE) throw err;
        // Another transaction holds the key's row: a notification of the key is running right now.
        return { status: "processing", retryAfterMs: Math.min(leaseMs, HELD_RETRY_MS), key: true };
      }
    newestPosition = key?.position ?? undefined;
    stale = order.position !== undefined && newestPosition !== undefined && isBefore(order.position, newestPosition);
    const heldFor = key ? heldForOther(key, owner) : 0;
    if (!stale && !forQueue && heldFor > 0) return { status: "processing", retryAfterMs: heldFor, key: true };
    if (takeQueued && !stale && !forQueue) {
      // A worker: the key's lane runs first to last, its own record at its place in it.
      const first = await firstInLane(query, sql.waiting, order.key, { id, position: order.position });
      if (first === "busy") return { status: "processing", retryAfterMs: 50, key: true };
      // Held by a dead letter: its redrive or discard lets the lane on; this job looks again later.
      if (first === "held") return { status: "processing", retryAfterMs: leaseMs, key: true };
      if (first !== "own") {
        const waiting = [id, order.key, order.position ?? null, fingerprint, row?.owner ?? owner, row?.attempts ?? 0];
        await query(sql.waiting.waitQueued, waiting);
        const run = await runFromLane(query, sql.waiting, first!.id, order.key, owner, leaseMs, newestPosition);
        return run === "busy" ? { status: "processing", retryAfterMs: 50, key: true } : run;
      }
    }
  }
  // Handed to a durable queue, an ordered claim joins its key's lane instead of taking the key.
  const holdsKey = order !== undefined && !stale && !forQueue;
  const waiting = order !== undefined && !stale && forQueue === true;
  // A queue's count of the run is kept, except that it never counts back: a job made afresh (a redrive)
  // counts on from the record's failed runs. A queued record's count is the run it waits for; so is
  // one handed over by a receiver whose mark as queued has not landed yet (its job ran first).
  // Appended to its lane (`waiting`), it has not run: the worker that takes it counts the run.
  const counted = (row?.attempts ?? 0) + (row?.state === "queued" || handedOver ? 0 : 1);
  const runs = (row?.attempts ?? 0) + (waiting ? 0 : 1);
  const attempt = request.attempt === undefined ? runs : Math.max(request.attempt, counted);
  await query(sql.upsert, [
    id,
    order?.key ?? null,
    order?.position ?? null,
    holdsKey,
    fingerprint,
    owner,
    leaseMs,
    attempt,
    waiting,
    listedAsOf(request)?.eventType ?? null,
    listedAsOf(request)?.subscriptionId ?? null,
    order && forQueue ? order.onDeadLetter === "hold" : null,
  ]);
  if (holdsKey) await query(sql.holdKey, [order.key, owner, leaseMs]);
  const handle: ClaimHandle = order ? { id, owner, order } : { id, owner };
  if (stale) return { status: "stale", ...handle, attempt, newestPosition: newestPosition! };
  return newestPosition === undefined
    ? { status: "claimed", ...handle, attempt }
    : { status: "claimed", ...handle, attempt, previousPosition: newestPosition };
}

/**
 * With the key free, claim the first of its lane for `owner`, holding the key. Undefined when
 * none waits, the key is held, or the first is still being handed to the queue.
 */
export async function takeNextIn(
  query: Query,
  sql: ClaimStatements,
  key: string,
  owner: string,
  leaseMs: number,
): Promise<ClaimedOrStale | undefined> {
  let held;
  try {
    [held] = await query<KeyRow>(sql.lockKey, [key]);
  } catch (err) {
    if (sqlState(err) === LOCK_NOT_AVAILABLE) return undefined;
    throw err;
  }
  if (heldForOther(held!, owner) > 0) return undefined;
  const first = await firstInLane(query, sql.waiting, key);
  if (first === undefined || first === "busy" || first === "held" || first === "own") return undefined;
  const run = await runFromLane(query, sql.waiting, first.id, key, owner, leaseMs, held!.position ?? undefined);
  return run === "busy" ? undefined : run;
}

interface KeyRow {
  position: string | null;
  owner: string | null;
  lease_ms: number | null;
  now_ms: number;
}

/** Lease time left of another claim holding the key; 0 when the key is free for `owner`. */
function heldForOther(key: KeyRow, owner: string): number {
  return key.owner !== null && key.owner !== owner && key.lease_ms !== null
    ? Math.max(0, key.lease_ms - key.now_ms)
    : 0;
}

/** Time left on a processing record's lease; undefined when it has none or it lapsed. */
function leaseLeft(row: RecordRow | undefined): number | undefined {
  if (row?.state !== "processing" || row.lease_ms === null) return undefined;
  const left = row.lease_ms - row.now_ms;
  return left > 0 ? Math.ceil(left) : undefined;
}

/** A row as `get` answers it: only the fields the record's state has. */
export function recordOf(row: RecordRow): IdempotencyRecord {
  const record: IdempotencyRecord = { state: row.state, fingerprint: row.fingerprint, attempts: row.attempts };
  if (row.owner !== null) record.owner = row.owner;
  if (row.state === "processing" && row.lease_ms !== null) record.leaseUntil = Math.round(row.lease_ms);
  if (row.answer !== null) record.answer = row.answer;
  if (row.error !== null) record.error = row.error;
  return record;
}
