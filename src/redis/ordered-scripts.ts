import { RECORD_STEPS } from "./scripts.js";

/**
 * The record transitions of `scripts.ts` for notifications claimed in order. Each touches two keys:
 * KEYS[1] the record's hash, KEYS[2] its order key's hash, which share a hash tag (see
 * `orderedKeys`), so the order check and the claim are one atomic script on one node, on Redis Cluster
 * too. ARGV are those of the unordered script, plus the position on a claim.
 *
 * Order hash fields: position (newest completed, sortable form), owner and leaseUntil (the claim
 * holding the key). Record hash fields added: position, holdsKey ('1' while this claim holds the key;
 * a stale claim does not).
 */
const {
  PRELUDE,
  OWNED_IN,
  CLAIM_CHECKS,
  TAKE_RECORD,
  EXTEND_RECORD,
  COMPLETE_RECORD,
  FAIL_RECORD,
  MARK_QUEUED_RECORD,
} = RECORD_STEPS;

/**
 * Whether position `a` is an earlier instant than `b`, byte by byte: the sortable form orders that
 * way, and Lua's own `<` on strings follows the server's locale.
 */
const BEFORE = `
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
`;

/** The claim ends: its key, if it held it, is free for the next notification. ARGV[1] is the owner. */
const LET_GO = `
if redis.call('HGET', KEYS[1], 'holdsKey') == '1' then
  redis.call('HDEL', KEYS[1], 'holdsKey')
  if redis.call('HGET', KEYS[2], 'owner') == ARGV[1] then redis.call('HDEL', KEYS[2], 'owner', 'leaseUntil') end
end
`;

/**
 * ARGV: fingerprint, owner, leaseMs, takeQueued ('1' or '0'), retentionMs, position ('' for none).
 * After the record's own checks: a position older than the key's newest completed one is stale (the
 * record is claimed, the key is not); otherwise another live holder of the key answers processing.
 * Returns those of CLAIM, with {'claimed', attempt, previousPosition or ''}, {'stale', attempt,
 * newestPosition} and {'processing', retryAfterMs, 'key'}.
 */
export const ORDERED_CLAIM = `${PRELUDE}${BEFORE}${CLAIM_CHECKS}
local order_key, position = KEYS[2], ARGV[6]
local order = redis.call('HMGET', order_key, 'position', 'owner', 'leaseUntil')
local newest = order[1]
local stale = position ~= '' and newest and before(position, newest)
if not stale and order[2] then
  local held_until = tonumber(order[3])
  if held_until and held_until > now then return {'processing', held_until - now, 'key'} end
end
${TAKE_RECORD}
if position ~= '' then redis.call('HSET', key, 'position', position) end
if stale then return {'stale', attempts, newest} end
redis.call('HSET', key, 'holdsKey', '1')
redis.call('HSET', order_key, 'owner', owner, 'leaseUntil', int(now + lease))
redis.call('PEXPIRE', order_key, int(math.max(retention, lease)))
return {'claimed', attempts, newest or ''}
`;

/**
 * ARGV: owner, leaseMs, retentionMs. The key is part of the claim: if another notification's claim
 * holds it now, the claim is lost (0). A lease of 0 ends both at once.
 */
export const ORDERED_EXTEND = `${PRELUDE}${OWNED_IN(["processing"])}
if redis.call('HGET', KEYS[1], 'holdsKey') == '1' then
  local order = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil')
  local now = now_ms()
  if order[1] and order[1] ~= ARGV[1] and tonumber(order[2]) > now then return 0 end
  local lease = tonumber(ARGV[2])
  redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'leaseUntil', int(now + lease))
  redis.call('PEXPIRE', KEYS[2], int(math.max(tonumber(ARGV[3]), lease)))
end
${EXTEND_RECORD}
return 1
`;

/** ARGV: owner, answerJson, retentionMs. Moves the key's position forward to the record's, never back. */
export const ORDERED_COMPLETE = `${PRELUDE}${BEFORE}${OWNED_IN(["processing"])}${COMPLETE_RECORD}
local position = redis.call('HGET', KEYS[1], 'position')
if position then
  local newest = redis.call('HGET', KEYS[2], 'position')
  if not newest or before(newest, position) then redis.call('HSET', KEYS[2], 'position', position) end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
${LET_GO}
return 1
`;

/** ARGV: owner, error, retentionMs. The position stays: a failed notification did not happen. */
export const ORDERED_FAIL = `${PRELUDE}${OWNED_IN(["processing"])}${FAIL_RECORD}${LET_GO}
return 1
`;

/** ARGV: owner, retentionMs. The worker that takes the record over claims the key again. */
export const ORDERED_MARK_QUEUED = `${PRELUDE}${OWNED_IN(["processing"])}${MARK_QUEUED_RECORD}${LET_GO}
return 1
`;

/** ARGV: owner. */
export const ORDERED_RELEASE = `${OWNED_IN(["processing", "queued"])}${LET_GO}
redis.call('DEL', KEYS[1])
return 1
`;

/** Registered with `defineCommand` and two keys each. */
export const ORDERED_COMMANDS = {
  mwIdemOrderedClaim: ORDERED_CLAIM,
  mwIdemOrderedExtend: ORDERED_EXTEND,
  mwIdemOrderedComplete: ORDERED_COMPLETE,
  mwIdemOrderedFail: ORDERED_FAIL,
  mwIdemOrderedMarkQueued: ORDERED_MARK_QUEUED,
  mwIdemOrderedRelease: ORDERED_RELEASE,
} as const;

export type OrderedCommandName = keyof typeof ORDERED_COMMANDS;

/**
 * The keys of a record claimed in order and of its order key. Both carry the order key as their hash
 * tag, so Redis Cluster puts a subscription's records and its position in one slot; braces and `%` in
 * the order key are escaped so the tag cannot end early or differ between the two.
 */
export function orderedKeys(prefix: string, orderKey: string, id: string): { record: string; order: string } {
  const tag = `{${orderKey.replace(/[{}%]/g, (c) => encodeURIComponent(c))}}`;
  return { record: `${prefix}${tag}:n:${id}`, order: `${prefix}${tag}:order` };
}
