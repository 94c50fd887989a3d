import { RECORD_STEPS } from "./scripts.js";

/**
 * The record transitions of `scripts.ts` for notifications claimed in order. Each touches four keys:
 * KEYS[1] the record's hash, KEYS[2] its order key's hash, KEYS[3] the key's waiting list, KEYS[4] the
 * key's carried data (a hash from record key to the job data its receiver kept with it, see
 * ORDERED_CLAIM), which share a hash tag (see `orderedKeys`), so the order check and the claim are one
 * atomic script on one node, on Redis Cluster too. ARGV are those of the unordered script, plus more
 * on a claim. The data sits in a hash of its own, not in the record's, so a record keeps Redis's
 * compact encoding after its data is gone.
 *
 * Order hash fields: position (newest completed, sortable form), owner, leaseUntil and heldSince (the
 * claim holding the key), lastHeldMs (how long the last hold took), runnerUntil (the key's mailbox has
 * a runner, a worker draining its waiting list or a drain job on its way, until then; see
 * ORDERED_MARK_WAITING), wokenBy (the receiver's claim whose append set runnerUntil for a drain job
 * it is about to queue; dropped once a worker takes the runner over). Record hash fields added:
 * position, holdsKey ('1' while this claim holds the key; a stale claim does not), waiting (its member
 * in the waiting list, while it is in it).
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

/**
 * The claim ends: its key, if it held it, is free for the next notification, and how long it was held
 * is kept (`lastHeldMs`) to tell the next in-process delivery how long it may wait. ARGV[1] is the owner.
 */
const LET_GO = `
if redis.call('HGET', KEYS[1], 'holdsKey') == '1' then
  redis.call('HDEL', KEYS[1], 'holdsKey')
  local order = redis.call('HMGET', KEYS[2], 'owner', 'heldSince')
  if order[1] == ARGV[1] then
    if order[2] then redis.call('HSET', KEYS[2], 'lastHeldMs', int(now_ms() - tonumber(order[2]))) end
    redis.call('HDEL', KEYS[2], 'owner', 'leaseUntil', 'heldSince', 'holder')
  end
end
`;

/** A record that stops waiting in its key's list (run, failed, released) leaves it, and its data goes. */
const LEAVE_LIST = `
redis.call('HDEL', KEYS[4], KEYS[1])
local member = redis.call('HGET', KEYS[1], 'waiting')
if member then
  redis.call('ZREM', KEYS[3], member)
  redis.call('HDEL', KEYS[1], 'waiting')
end
`;

/**
 * The waiting list: a sorted set per order key (KEYS[3]) whose members, all at score 0, are
 * `position .. '\n' .. id` and so sort by position, byte by byte ('' when the notification has none:
 * it goes first). A record in the list names its member in its `waiting` field.
 *
 * `first_waiter` finds the list's head that can run now, dropping members whose record no longer
 * waits (run, expired, failed, released): it answers the id, position and member of a queued record
 * (or of `own_id`, the caller's own), 'busy' when the head is a receiver's claim still being handed
 * to the queue, or nil when the list is empty. `take_waiter` claims such a queued record for `owner`.
 * `hold` makes a claim the key's holder.
 */
const WAITING = `
local function first_waiter(waiting, rec_prefix, now, own_id)
  while true do
    local head = redis.call('ZRANGE', waiting, 0, 0)[1]
    if not head then return nil end
    local nl = string.find(head, '\\n', 1, true)
    local pos, id = string.sub(head, 1, nl - 1), string.sub(head, nl + 1)
    local r = redis.call('HMGET', rec_prefix .. id, 'state', 'leaseUntil', 'waiting', 'retryAt')
    -- A failed run put back to be retried: the lane waits for it, in position order.
    local retry_in = (tonumber(r[4]) or 0) - now
    if id == own_id or (r[3] == head and r[1] == 'queued') then
      if r[1] == 'queued' and retry_in > 0 then return 'later', retry_in end
      return id, pos, head
    end
    if r[3] == head then
      if r[1] == 'processing' and tonumber(r[2]) and tonumber(r[2]) > now then return 'busy' end
    end
    redis.call('ZREM', waiting, head)
  end
end
local function take_waiter(waiting, rec_key, member, owner, lease, retention, now)
  redis.call('ZREM', waiting, member)
  local attempts = (tonumber(redis.call('HGET', rec_key, 'attempts')) or 0) + 1
  redis.call('HSET', rec_key, 'state', 'processing', 'owner', owner, 'leaseUntil', int(now + lease), 'attempts', attempts)
  redis.call('HDEL', rec_key, 'waiting', 'holdsKey', 'retryAt')
  redis.call('PEXPIRE', rec_key, int(math.max(retention, lease)))
  return attempts
end
local function hold(rec_key, order_key, owner, lease, retention, now, holder)
  redis.call('HSET', rec_key, 'holdsKey', '1')
  redis.call('HSET', order_key, 'owner', owner, 'leaseUntil', int(now + lease), 'heldSince', int(now))
  if holder then redis.call('HSET', order_key, 'holder', holder) else redis.call('HDEL', order_key, 'holder') end
  redis.call('PEXPIRE', order_key, int(math.max(retention, lease)))
end
-- A worker that held the key and died (or lost its lease) leaves its notification run halfway: it goes
-- back into the waiting list at its position, so it runs before any newer one, not after as stale.
local function return_lapsed_holder(order_key, waiting, rec_prefix, now, own_id)
  local h = redis.call('HMGET', order_key, 'holder', 'owner', 'leaseUntil')
  if not h[1] or (tonumber(h[3]) and tonumber(h[3]) > now) then return end
  redis.call('HDEL', order_key, 'holder')
  if h[1] == own_id then return end
  local rec_key = rec_prefix .. h[1]
  local r = redis.call('HMGET', rec_key, 'state', 'owner', 'leaseUntil', 'position', 'holdsKey')
  if r[1] == 'processing' and r[5] == '1' and r[2] == h[2] and (tonumber(r[3]) or 0) <= now then
    local member = (r[4] or '') .. '\\n' .. h[1]
    redis.call('HSET', rec_key, 'state', 'queued', 'waiting', member)
    redis.call('HDEL', rec_key, 'leaseUntil', 'holdsKey')
    redis.call('ZADD', waiting, 0, member)
  end
end
-- Claim the waiter found for owner: stale when older than the key's newest completed position.
-- The answer names the waiter and gives back the job data its receiver kept with it ('' if none).
local function run_waiter(waiting, order_key, carried_key, rec_prefix, id, pos, member, newest, owner, lease, retention, now)
  local rec_key = rec_prefix .. id
  local attempts = take_waiter(waiting, rec_key, member, owner, lease, retention, now)
  local carried = redis.call('HGET', carried_key, rec_key) or ''
  redis.call('HSET', order_key, 'runnerUntil', int(now + lease))
  redis.call('HDEL', order_key, 'wokenBy')
  if pos ~= '' and newest and before(pos, newest) then return {'stale', attempts, newest, id, pos, carried} end
  hold(rec_key, order_key, owner, lease, retention, now, id)
  return {'claimed', attempts, newest or '', id, pos, carried}
end
`;

/**
 * ARGV: fingerprint, owner, leaseMs, takeQueued ('1' or '0'), retentionMs, position ('' for none), id,
 * mode, handoff (owner token or ''), record key prefix (KEYS[1] without the id), the waiting list's
 * maximum length (a 'queue' claim beyond it answers {'processing', leaseMs, 'full'}), the job data to
 * carry ('' for none).
 *
 * After the record's own checks, a position older than the key's newest completed one is stale (the
 * record is claimed, the key is not). Then, by mode:
 * - 'direct' (a receiver running the handler itself): another live holder of the key answers
 *   processing, with the time its last holder took (bounded by the lease) as the expected wait.
 * - 'queue' (a receiver handing the notification to a durable queue): the record joins the key's
 *   waiting list in position order; the key is not held and never makes it wait.
 * - 'worker' (a queue worker): a live holder answers processing; otherwise the worker runs the list's
 *   first waiter, which may be an older notification than its own job's (its own record then stays
 *   queued, in the list, for whoever holds the key next).
 * Returns those of CLAIM, with {'claimed', attempt, previousPosition or '', [id, position]},
 * {'stale', attempt, newestPosition, [id, position, carried data]} and {'processing', retryAfterMs,
 * 'key'}; id, position and data are there when the claim is on another record than the one asked for.
 * A 'queue' claim with data to carry keeps it (KEYS[4]) and hands the record over at once, as
 * ORDERED_MARK_WAITING does after a claim without, answering {'waiting', attempt, previousPosition or
 * '', wake}: the receiver's append is one script, and the worker the record goes to gets the data
 * with it.
 */
export const ORDERED_CLAIM = `${PRELUDE}${BEFORE}
local handoff = ARGV[9]
local to_queue = false
if ARGV[8] == 'queue' and ARGV[4] ~= '1' then
  -- A later delivery of one still waiting in its mailbox, which has a runner: a duplicate, no new claim.
  local r = redis.call('HMGET', KEYS[1], 'state', 'fingerprint', 'waiting')
  if r[1] == 'queued' and r[3] and r[2] == ARGV[1] then
    local o = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil', 'runnerUntil')
    local at = now_ms()
    if (o[1] and (tonumber(o[2]) or 0) > at) or (tonumber(o[3]) or 0) > at then return {'queued', 'lane'} end
  end
end
${CLAIM_CHECKS}${WAITING}
local order_key, waiting, carried_key, position, id, mode, rec_prefix = KEYS[2], KEYS[3], KEYS[4], ARGV[6], ARGV[7], ARGV[8], ARGV[10]
local order = redis.call('HMGET', order_key, 'position', 'owner', 'leaseUntil', 'heldSince', 'lastHeldMs')
local newest = order[1]
local stale = position ~= '' and newest and before(position, newest)
local held_until = tonumber(order[3])
local held = order[2] and held_until and held_until > now
if stale then
  local old_member = redis.call('HGET', key, 'waiting')
  if old_member then redis.call('ZREM', waiting, old_member) end
  redis.call('HDEL', carried_key, key)
  ${TAKE_RECORD}
  if position ~= '' then redis.call('HSET', key, 'position', position) end
  return {'stale', attempts, newest}
end
local member = position .. '\\n' .. id
if mode == 'direct' then
  if held then
    local wait = held_until - now
    local last = tonumber(order[5])
    if last then wait = math.min(wait, math.max(1, last - (now - tonumber(order[4] or now)))) end
    return {'processing', wait, 'key'}
  end
  ${TAKE_RECORD}
  if position ~= '' then redis.call('HSET', key, 'position', position) end
  hold(key, order_key, owner, lease, retention, now)
  return {'claimed', attempts, newest or ''}
end
if mode == 'queue' then
  if not redis.call('HGET', key, 'waiting') and redis.call('ZCARD', waiting) >= tonumber(ARGV[11]) then
    return {'processing', lease, 'full'}
  end
  ${TAKE_RECORD}
  redis.call('HSET', key, 'position', position, 'waiting', member)
  redis.call('ZADD', waiting, 0, member)
  redis.call('PEXPIRE', waiting, int(math.max(retention, lease)))
  local carried = ARGV[12] or ''
  if carried == '' then return {'claimed', attempts, newest or ''} end
  -- Kept with its data: queued at once, and a runner woken when the key has none (ORDERED_MARK_WAITING).
  redis.call('HSET', carried_key, key, carried)
  redis.call('PEXPIRE', carried_key, int(math.max(retention, lease)))
  redis.call('HSET', key, 'state', 'queued')
  redis.call('HDEL', key, 'leaseUntil')
  if held or (tonumber(redis.call('HGET', order_key, 'runnerUntil')) or 0) > now then
    return {'waiting', attempts, newest or '', 0}
  end
  redis.call('HSET', order_key, 'runnerUntil', int(now + lease), 'wokenBy', owner)
  if redis.call('PTTL', order_key) < lease then redis.call('PEXPIRE', order_key, int(math.max(retention, lease))) end
  return {'waiting', attempts, newest or '', 1}
end
-- A worker: its own record waits in the list (queued), then the list's first waiter runs.
local function join_list()
  if redis.call('HGET', key, 'waiting') ~= member then
    local old_member = redis.call('HGET', key, 'waiting')
    if old_member then redis.call('ZREM', waiting, old_member) end
    redis.call('ZADD', waiting, 0, member)
    redis.call('PEXPIRE', waiting, int(math.max(retention, lease)))
  end
end
if held then
  -- Held by a runner: in the list, queued, it is that runner's to take next (a redriven dead letter
  -- among them), instead of its job coming back a lease later to find the key free.
  join_list()
  if state ~= 'queued' then
    redis.call('HSET', key, 'state', 'queued', 'fingerprint', fingerprint, 'position', position, 'waiting', member)
    redis.call('HDEL', key, 'leaseUntil', 'holdsKey', 'retryAt')
    redis.call('PEXPIRE', key, int(retention))
  end
  return {'processing', held_until - now, 'key'}
end
return_lapsed_holder(order_key, waiting, rec_prefix, now, id)
join_list()
local first, first_pos, first_member = first_waiter(waiting, rec_prefix, now, id)
if first == 'busy' then return {'processing', 50, 'key'} end
if first == 'later' then return {'processing', first_pos, 'key'} end
if first == id or not first then
  redis.call('ZREM', waiting, member)
  ${TAKE_RECORD}
  if position ~= '' then redis.call('HSET', key, 'position', position) end
  hold(key, order_key, owner, lease, retention, now, id)
  redis.call('HSET', order_key, 'runnerUntil', int(now + lease))
  redis.call('HDEL', order_key, 'wokenBy')
  return {'claimed', attempts, newest or ''}
end
redis.call('HSET', key, 'state', 'queued', 'fingerprint', fingerprint, 'position', position, 'waiting', member)
redis.call('HDEL', key, 'leaseUntil', 'holdsKey')
redis.call('PEXPIRE', key, int(retention))
return run_waiter(waiting, order_key, carried_key, rec_prefix, first, first_pos, first_member, newest, owner, lease, retention, now)
`;

/**
 * KEYS: the order key's hash, its waiting list, its carried data. ARGV: owner, leaseMs, retentionMs, record key prefix.
 * Hand the key, if free, to the first waiter of its list, claimed for `owner`: the worker that just
 * finished a notification of the key runs the next one at once. Returns {} when there is none (or the
 * key is held, or the head is still being handed to the queue), else as ORDERED_CLAIM with id and position.
 */
export const ORDERED_NEXT = `${PRELUDE}${BEFORE}${WAITING}
local order_key, waiting, carried_key = KEYS[1], KEYS[2], KEYS[3]
local owner, lease, retention, rec_prefix = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local now = now_ms()
local order = redis.call('HMGET', order_key, 'position', 'owner', 'leaseUntil')
if order[2] and tonumber(order[3]) and tonumber(order[3]) > now then return {} end
return_lapsed_holder(order_key, waiting, rec_prefix, now, nil)
local first, first_pos, first_member = first_waiter(waiting, rec_prefix, now, nil)
-- The head waits for its retry: the runner that put it back comes again then (see ORDERED_RETRY).
if first == 'later' then return {} end
if not first or first == 'busy' then
  -- The runner stops here: an append from now on wakes a new one (ORDERED_MARK_WAITING), one before
  -- this was in the list to be found; a head still being handed over wakes one when it is marked.
  redis.call('HDEL', order_key, 'runnerUntil', 'wokenBy')
  return {}
end
return run_waiter(waiting, order_key, carried_key, rec_prefix, first, first_pos, first_member, order[1], owner, lease, retention, now)
`;

/**
 * KEYS: the order key's hash, its waiting list, its carried data. ARGV: owner, record key prefix. Undo a hand-over by
 * ORDERED_NEXT whose answer never arrived: if `owner` holds the key, the notification it was handed
 * goes back in line at its position and the key is free, at once instead of after a lease. Returns 1
 * when there was one to undo. A stale hand-over (which holds no key) is left to its lease.
 */
export const ORDERED_ABANDON_NEXT = `${PRELUDE}${BEFORE}${WAITING}
local order_key, waiting, owner, rec_prefix = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
if redis.call('HGET', order_key, 'owner') ~= owner then return 0 end
-- Its lease ends now, on the key and on its record: then it goes back as a dead holder's would.
local now = now_ms()
local holder = redis.call('HGET', order_key, 'holder')
if holder and redis.call('HGET', rec_prefix .. holder, 'owner') == owner then
  redis.call('HSET', rec_prefix .. holder, 'leaseUntil', int(now))
end
redis.call('HSET', order_key, 'leaseUntil', int(now))
return_lapsed_holder(order_key, waiting, rec_prefix, now, nil)
redis.call('HDEL', order_key, 'owner', 'leaseUntil', 'heldSince')
return 1
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
if position and position ~= '' then
  local newest = redis.call('HGET', KEYS[2], 'position')
  if not newest or before(newest, position) then redis.call('HSET', KEYS[2], 'position', position) end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
${LEAVE_LIST}${LET_GO}
return 1
`;

/** ARGV: owner, error, retentionMs. The position stays: a failed notification did not happen. */
export const ORDERED_FAIL = `${PRELUDE}${OWNED_IN(["processing"])}${FAIL_RECORD}${LEAVE_LIST}${LET_GO}
return 1
`;

/**
 * ARGV: owner, error, retentionMs, delayMs, leaseMs, id. A run of the lane that failed with attempts
 * left: the record goes back into its key's waiting list at its position, queued, with its data and
 * its attempts, to be retried from `retryAt` (now + delayMs). Until then `first_waiter` answers
 * 'later' for it, so nothing behind it runs (position order), and the key keeps its runner mark past
 * the retry, so appends meanwhile queue no drain job: the runner that put it back comes again then.
 */
export const ORDERED_RETRY = `${PRELUDE}${OWNED_IN(["processing"])}${LET_GO}
local now = now_ms()
local retry_at = now + tonumber(ARGV[4])
local member = (redis.call('HGET', KEYS[1], 'position') or '') .. '\\n' .. ARGV[6]
redis.call('HSET', KEYS[1], 'state', 'queued', 'error', ARGV[2], 'retryAt', int(retry_at), 'waiting', member)
redis.call('HDEL', KEYS[1], 'leaseUntil')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[3], 0, member)
local keep = int(math.max(tonumber(ARGV[3]), tonumber(ARGV[4]) + tonumber(ARGV[5])))
redis.call('PEXPIRE', KEYS[3], keep)
local runner = math.max(tonumber(redis.call('HGET', KEYS[2], 'runnerUntil')) or 0, retry_at + tonumber(ARGV[5]))
redis.call('HSET', KEYS[2], 'runnerUntil', int(runner), 'retryUntil', int(retry_at + tonumber(ARGV[5])))
redis.call('HDEL', KEYS[2], 'wokenBy')
redis.call('PEXPIRE', KEYS[2], keep)
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], keep) end
return 1
`;

/** ARGV: owner, retentionMs. The record stays in its key's waiting list, if it is in one, for a worker. */
export const ORDERED_MARK_QUEUED = `${PRELUDE}${OWNED_IN(["processing"])}${MARK_QUEUED_RECORD}${LET_GO}
return 1
`;

/**
 * ARGV: owner, retentionMs, leaseMs. MARK_QUEUED for a notification that joins its key's mailbox
 * without a job of its own, answering {1, wake}: wake is 1 when the key has no runner (no live holder,
 * no live runnerUntil), and the caller must then queue one drain job; the runner flag is set for
 * `leaseMs` in the same step, so other appends meanwhile queue none. A runner clears the flag in the
 * same step as it finds the list empty (ORDERED_NEXT), so an append is either found by the runner or
 * wakes a new one. The flag is marked as this claim's (wokenBy) until a worker takes the runner over,
 * so a receiver whose drain job could not be queued clears it on release (ORDERED_RELEASE) and the
 * next append wakes a runner at once. {0, 0} when the claim is no longer the caller's.
 */
export const ORDERED_MARK_WAITING = `${PRELUDE}${OWNED_IN(["processing"])}${MARK_QUEUED_RECORD}${LET_GO}
local now = now_ms()
local order = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil', 'runnerUntil')
local held = order[1] and (tonumber(order[2]) or 0) > now
if held or (tonumber(order[3]) or 0) > now then return {1, 0} end
local lease = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], 'runnerUntil', int(now + lease), 'wokenBy', ARGV[1])
if redis.call('PTTL', KEYS[2]) < lease then redis.call('PEXPIRE', KEYS[2], int(math.max(tonumber(ARGV[2]), lease))) end
return {1, 1}
`;

/**
 * ARGV: owner. A runner flag this claim's append set (ORDERED_MARK_WAITING) goes too: its drain job
 * was never queued (the queue refused it), and a flag left standing would keep the next appends from
 * waking one for a whole lease. A worker that took the runner over has dropped wokenBy: its flag stays.
 */
export const ORDERED_RELEASE = `${PRELUDE}${OWNED_IN(["processing", "queued"])}${LEAVE_LIST}${LET_GO}
if redis.call('HGET', KEYS[2], 'wokenBy') == ARGV[1] then redis.call('HDEL', KEYS[2], 'runnerUntil', 'wokenBy') end
redis.call('DEL', KEYS[1])
return 1
`;

/** Registered with `defineCommand`: four keys each, three for those on the key alone (`orderedKeys`). */
export const ORDERED_COMMANDS = {
  mwIdemOrderedClaim: ORDERED_CLAIM,
  mwIdemOrderedNext: ORDERED_NEXT,
  mwIdemOrderedAbandonNext: ORDERED_ABANDON_NEXT,
  mwIdemOrderedExtend: ORDERED_EXTEND,
  mwIdemOrderedComplete: ORDERED_COMPLETE,
  mwIdemOrderedFail: ORDERED_FAIL,
  mwIdemOrderedRetry: ORDERED_RETRY,
  mwIdemOrderedMarkQueued: ORDERED_MARK_QUEUED,
  mwIdemOrderedMarkWaiting: ORDERED_MARK_WAITING,
  mwIdemOrderedRelease: ORDERED_RELEASE,
} as const;

export type OrderedCommandName = keyof typeof ORDERED_COMMANDS;

/**
 * The keys of a record claimed in order and of its order key. Both carry the order key as their hash
 * tag, so Redis Cluster puts a subscription's records and its position in one slot; braces and `%` in
 * the order key are escaped so the tag cannot end early or differ between the two.
 */
export function orderedKeys(
  prefix: string,
  orderKey: string,
  id: string,
): { record: string; order: string; waiting: string; carried: string; recordPrefix: string } {
  const tag = `{${orderKey.replace(/[{}%]/g, (c) => encodeURIComponent(c))}}`;
  const recordPrefix = `${prefix}${tag}:n:`;
  return {
    record: recordPrefix + id,
    order: `${prefix}${tag}:order`,
    waiting: `${prefix}${tag}:waiting`,
    carried: `${prefix}${tag}:carried`,
    recordPrefix,
  };
}
