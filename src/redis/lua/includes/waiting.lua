-- The lane: a sorted set per order key (KEYS[3]) whose members, all at score 0, are
-- `position .. '\n' .. id` and so sort by position, byte by byte ('' when the notification has none:
-- it goes first). A record in the list names its member in its `waiting` field.
--
-- `first_waiter` finds the list's head that can run now, dropping members whose record no longer
-- waits (run, expired, failed, released): it answers the id, position and member of a queued record
-- (or of `own_id`, the caller's own), 'busy' when the head is a receiver's claim still being handed
-- to the queue, 'held' when it is a dead letter holding its lane (ORDERED_FAIL_IN_LANE on a lane
-- whose policy is hold: only its own redriven job's claim takes it), or nil when the list is empty. `take_waiter` claims such a queued record for `owner`.
-- `hold` makes a claim the key's holder.

local function first_waiter(waiting, rec_prefix, now, own_id)
  while true do
    local head = redis.call('ZRANGE', waiting, 0, 0)[1]
    if not head then return nil end
    local nl = string.find(head, '\n', 1, true)
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
      if r[1] == 'failed' then return 'held' end
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
-- The console's list (see `time-index.ts`) told of a record moved from processing to queued here, by
-- no script of its own: the time index `index` (nil without one; absent, the store keeps none) and
-- the state sets beside it move it with the record, each kept as long as the record at least.
local function relist_queued(index, rec_key, now)
  if not index or redis.call('EXISTS', index) == 0 then return end
  local base = string.sub(index, 1, #index - #':time-index')
  local ttl = redis.call('PTTL', rec_key)
  for _, set in ipairs({index, base .. ':state:queued'}) do
    redis.call('ZADD', set, now, rec_key)
    if ttl > redis.call('PTTL', set) then redis.call('PEXPIRE', set, ttl) end
  end
  redis.call('ZREM', base .. ':state:processing', rec_key)
end
-- A worker that held the key and died (or lost its lease) leaves its notification run halfway: it goes
-- back into the lane at its position, so it runs before any newer one, not after as stale.
-- `index`: the record's time index, when the script has it (see `relist_queued`).
local function return_lapsed_holder(order_key, waiting, rec_prefix, now, own_id, index)
  local h = redis.call('HMGET', order_key, 'holder', 'owner', 'leaseUntil')
  if not h[1] or (tonumber(h[3]) and tonumber(h[3]) > now) then return end
  redis.call('HDEL', order_key, 'holder')
  if h[1] == own_id then return end
  local rec_key = rec_prefix .. h[1]
  local r = redis.call('HMGET', rec_key, 'state', 'owner', 'leaseUntil', 'position', 'holdsKey')
  if r[1] == 'processing' and r[5] == '1' and r[2] == h[2] and (tonumber(r[3]) or 0) <= now then
    local member = (r[4] or '') .. '\n' .. h[1]
    redis.call('HSET', rec_key, 'state', 'queued', 'waiting', member)
    redis.call('HDEL', rec_key, 'leaseUntil', 'holdsKey')
    redis.call('ZADD', waiting, 0, member)
    relist_queued(index, rec_key, now)
  end
end
-- Claim the waiting notification found for owner: stale when older than the key's newest completed position.
-- The answer names the waiting notification and gives back the job data its receiver kept with it ('' if none).
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
