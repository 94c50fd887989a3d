/**
 * The idempotency record's state machine as Lua, one script per transition. Each script touches
 * exactly one key (the record's hash), so it runs atomically on one node and works unchanged on Redis
 * Cluster: no hash tag is needed in the key prefix. (The ordered variants in `ordered-scripts.ts` touch
 * two keys, which share a hash tag.)
 *
 * Leases are measured on the server's clock (`TIME`), never the caller's: receivers on machines whose
 * clocks disagree still agree on whether a lease is live. Every transition after a claim checks the
 * owner token, which is what makes a late write harmless: a command that timed out on the client and
 * reaches Redis afterwards (or a process that paused past its lease) can only change a record it
 * still owns.
 *
 * Hash fields: state, fingerprint, owner, leaseUntil (epoch ms; processing, or queued at claim: the
 * hand-off lease), attempts,
 * answer (JSON, completed only), error (failed only).
 */

/** Shared helpers: the server's time in epoch ms, and integers formatted without an exponent. */
const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function int(n)
  return string.format('%.0f', n)
end
`;

/** The caller still owns the record and it is in `state`; otherwise the script answers 0. */
const OWNED_IN = (states: string[]) => `
local current = redis.call('HMGET', KEYS[1], 'state', 'owner')
if current[2] ~= ARGV[1] then return 0 end
if ${states.map((state) => `current[1] ~= '${state}'`).join(" and ")} then return 0 end
`;

/**
 * The checks of a claim on the record itself, answering when it cannot be taken. ARGV: fingerprint,
 * owner, leaseMs, takeQueued ('1' or '0'), retentionMs; the script defines `handoff` before them
 * (the owner token of a receiver whose processing claim a worker may take over, or '') and
 * `to_queue` (a receiver's claim for a durable queue, which writes the record queued at once).
 */
const CLAIM_CHECKS = `
local key = KEYS[1]
local fingerprint, owner, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local take_queued, retention = ARGV[4] == '1', tonumber(ARGV[5])
local now = now_ms()
local record = redis.call('HMGET', key, 'state', 'fingerprint', 'leaseUntil', 'answer', 'attempts', 'owner')
local state = record[1]
-- Whether the record can be taken over is decided first; the payload is compared only against a
-- completed record, the one case where a different payload under the id is a sender's error.
if state == 'completed' then
  if record[2] ~= fingerprint then return {'conflict'} end
  return {'completed', record[4]}
end
if state == 'processing' and not (take_queued and handoff ~= '' and record[6] == handoff) then
  -- A worker may take over the claim of the receiver that queued its job (before it marked it queued).
  local lease_until = tonumber(record[3])
  if lease_until and lease_until > now then return {'processing', lease_until - now} end
end
if state == 'queued' and not take_queued then
  -- Another payload under a queued id waits for the queued one's outcome instead of being acknowledged.
  if record[2] ~= fingerprint then return {'processing', lease} end
  return {'queued'}
end
if state == 'queued' and to_queue then
  -- A receiver taking over a queued record whose job is missing: while the hand-off lease of the
  -- receiver that queued it at claim is live, its job may still be on its way.
  local lease_until = tonumber(record[3])
  if lease_until and lease_until > now then return {'processing', lease_until - now} end
end
`;

/**
 * Absent, failed, lease lapsed, or queued and taken by a worker: the caller owns a fresh record,
 * under the fingerprint of the payload it is about to run.
 */
const TAKE_RECORD = `
local attempts = (tonumber(record[5]) or 0) + 1
redis.call('DEL', key)
redis.call('HSET', key, 'state', 'processing', 'fingerprint', fingerprint, 'owner', owner,
  'leaseUntil', int(now + lease), 'attempts', attempts)
redis.call('PEXPIRE', key, int(math.max(retention, lease)))
`;

/**
 * `TAKE_RECORD` for a record of its own (no order key): its hash holds only the fields the fresh
 * record writes (state, fingerprint, owner, leaseUntil, attempts) unless it failed (`error`), so only
 * a failed one is deleted before them; a queued one, a worker's usual claim, is written over in place.
 */
const TAKE_OWN_RECORD = `
local attempts = (tonumber(record[5]) or 0) + 1
if state == 'failed' then redis.call('DEL', key) end
redis.call('HSET', key, 'state', 'processing', 'fingerprint', fingerprint, 'owner', owner,
  'leaseUntil', int(now + lease), 'attempts', attempts)
redis.call('PEXPIRE', key, int(math.max(retention, lease)))
`;

/**
 * ARGV: fingerprint, owner, leaseMs, takeQueued ('1' or '0'), retentionMs, handoff (owner token or ''),
 * toQueue ('1' or absent). A different fingerprint is a conflict only against a completed record.
 * With toQueue the record is written queued, its owner and lease kept as the hand-off lease, so no
 * `markQueued` follows the job's add.
 * Returns attempt (an integer: claimed, the common answer, kept the shortest to send and read) |
 * {'queued_at_claim', attempt} | {'processing', retryAfterMs} | {'queued'} | {'completed', answerJson} |
 * {'conflict'}.
 */
export const CLAIM = `${PRELUDE}
local handoff = ARGV[6] or ''
local to_queue = ARGV[7] == '1'
${CLAIM_CHECKS}${TAKE_OWN_RECORD}
if to_queue then
  redis.call('HSET', key, 'state', 'queued')
  return {'queued_at_claim', attempts}
end
return attempts
`;

const EXTEND_RECORD = `
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'leaseUntil', int(now_ms() + lease))
redis.call('PEXPIRE', KEYS[1], int(math.max(tonumber(ARGV[3]), lease)))
`;

/**
 * ARGV: owner, leaseMs, retentionMs. A lease of 0 ends the claim at once (see `abandon`); a record
 * queued at claim has its hand-off lease ended the same way. Returns 1 or 0.
 */
export const EXTEND = `${PRELUDE}${OWNED_IN(["processing", "queued"])}${EXTEND_RECORD}
return 1
`;

const COMPLETE_RECORD = `
redis.call('HSET', KEYS[1], 'state', 'completed', 'answer', ARGV[2])
redis.call('HDEL', KEYS[1], 'leaseUntil', 'error')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
`;

/** ARGV: owner, answerJson, retentionMs. Returns 1 or 0. */
export const COMPLETE = `${PRELUDE}${OWNED_IN(["processing"])}${COMPLETE_RECORD}
return 1
`;

const FAIL_RECORD = `
redis.call('HSET', KEYS[1], 'state', 'failed', 'error', ARGV[2])
redis.call('HDEL', KEYS[1], 'leaseUntil')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
`;

/** ARGV: owner, error, retentionMs. Returns 1 or 0. */
export const FAIL = `${PRELUDE}${OWNED_IN(["processing"])}${FAIL_RECORD}
return 1
`;

const MARK_QUEUED_RECORD = `
redis.call('HSET', KEYS[1], 'state', 'queued')
redis.call('HDEL', KEYS[1], 'leaseUntil')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
`;

/** ARGV: owner, retentionMs. Returns 1 or 0. */
export const MARK_QUEUED = `${PRELUDE}${OWNED_IN(["processing"])}${MARK_QUEUED_RECORD}
return 1
`;

/** ARGV: owner. Deletes a processing or queued record its owner gives up. Returns 1 or 0. */
export const RELEASE = `${OWNED_IN(["processing", "queued"])}
redis.call('DEL', KEYS[1])
return 1
`;

/** The parts the ordered scripts (`ordered-scripts.ts`) build on, so both sets share one record logic. */
export const RECORD_STEPS = {
  PRELUDE,
  OWNED_IN,
  CLAIM_CHECKS,
  TAKE_RECORD,
  EXTEND_RECORD,
  COMPLETE_RECORD,
  FAIL_RECORD,
  MARK_QUEUED_RECORD,
} as const;

/** Names under which the scripts are registered on the client with `defineCommand`. */
export const COMMANDS = {
  mwIdemClaim: CLAIM,
  mwIdemExtend: EXTEND,
  mwIdemComplete: COMPLETE,
  mwIdemFail: FAIL,
  mwIdemMarkQueued: MARK_QUEUED,
  mwIdemRelease: RELEASE,
} as const;

export type CommandName = keyof typeof COMMANDS;
