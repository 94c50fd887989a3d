--@include prelude
--@include before

if ARGV[14] == '1' then
  -- A worker's claim sent without the id's binding (see `order-binding.ts`): a record waiting in its
  -- lane, or done, cannot have been bound to another key since; any other asks for the binding first.
  local state = redis.call('HGET', KEYS[1], 'state')
  if state ~= 'queued' and state ~= 'completed' then return {'bind'} end
end

local handoff = ARGV[9]
local to_queue = false
if ARGV[8] == 'queue' and ARGV[4] ~= '1' then
  -- A later delivery of one still waiting in its lane, which has a runner: a duplicate, no new claim.
  local r = redis.call('HMGET', KEYS[1], 'state', 'fingerprint', 'waiting')
  if r[1] == 'queued' and r[3] and r[2] == ARGV[1] then
    local o = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil', 'runnerUntil')
    local at = now_ms()
    if (o[1] and (tonumber(o[2]) or 0) > at) or (tonumber(o[3]) or 0) > at then return {'queued', 'lane'} end
  end
end
--@include claim-checks
--@include waiting
--@include lane-index

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
  --@include take-record

  if position ~= '' then redis.call('HSET', key, 'position', position) end
  return {'stale', attempts, newest}
end
local member = position .. '\n' .. id
if mode == 'direct' then
  if held then
    local wait = held_until - now
    local last = tonumber(order[5])
    if last then wait = math.min(wait, math.max(1, last - (now - tonumber(order[4] or now)))) end
    return {'processing', wait, 'key'}
  end
  --@include take-record

  if position ~= '' then redis.call('HSET', key, 'position', position) end
  hold(key, order_key, owner, lease, retention, now)
  return {'claimed', attempts, newest or ''}
end
if mode == 'queue' then
  -- The lane's policy for a dead letter, as the receivers give it (see ORDERED_FAIL_IN_LANE).
  if ARGV[13] == 'hold' then redis.call('HSET', order_key, 'hold', '1')
  elseif redis.call('HEXISTS', order_key, 'hold') == 1 then redis.call('HDEL', order_key, 'hold') end
  if not redis.call('HGET', key, 'waiting') and redis.call('ZCARD', waiting) >= tonumber(ARGV[11]) then
    return {'processing', lease, 'full'}
  end
  --@include take-record

  -- Appended to its lane it has not run: the worker that takes it counts the run.
  attempts = attempts - 1
  redis.call('HSET', key, 'position', position, 'waiting', member, 'attempts', attempts)
  redis.call('ZADD', waiting, 0, member)
  redis.call('PEXPIRE', waiting, int(math.max(retention, lease)))
  list_lane(KEYS[5], order_key, now, retention)
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
  redis.call('HSET', order_key, 'runnerUntil', int(now + lease), 'wokenBy', owner, 'wokenAt', int(now), 'drain', key)
  if redis.call('PTTL', order_key) < lease then redis.call('PEXPIRE', order_key, int(math.max(retention, lease))) end
  return {'waiting', attempts, newest or '', 1}
end
-- A worker: its own record waits in the list (queued), then the list's first waiting notification runs.
local function join_list()
  if redis.call('HGET', key, 'waiting') ~= member then
    local old_member = redis.call('HGET', key, 'waiting')
    if old_member then redis.call('ZREM', waiting, old_member) end
    redis.call('ZADD', waiting, 0, member)
    redis.call('PEXPIRE', waiting, int(math.max(retention, lease)))
    list_lane(KEYS[5], order_key, now, retention)
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
return_lapsed_holder(order_key, waiting, rec_prefix, now, id, KEYS[6])
join_list()
local first, first_pos, first_member = first_waiter(waiting, rec_prefix, now, id)
if first == 'busy' then return {'processing', 50, 'key'} end
if first == 'later' then return {'processing', first_pos, 'key'} end
-- Held by a dead letter: its redrive or discard lets the lane on; this job looks again a lease later.
if first == 'held' then return {'processing', lease, 'key'} end
if first == id or not first then
  redis.call('ZREM', waiting, member)
  --@include take-record

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
