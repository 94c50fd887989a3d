-- Wake a lane the sweep found stalled (LANE_LOOK) and whose drain job the queue no longer has: unless
-- something ran or woke it since (its holder, its retry, or its drain job changed), its head becomes
-- the notification whose job runs the lane, marked as its runner for the lease (appends meanwhile
-- wake none), and its job data is answered for the sweep to queue that job with.
-- KEYS: the lanes index, the order hash, its lane, its carried data. ARGV: the index member
-- (the order hash key), the record key prefix, the drain record key LANE_LOOK answered ('' for none),
-- leaseMs, retentionMs.
-- Returns {} when there is nothing to wake, else {head id, its job data or ''}.
--@include prelude
--@include before
--@include waiting

local now = now_ms()
local order = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil', 'retryUntil', 'drain')
if (order[1] and (tonumber(order[2]) or 0) > now) or (tonumber(order[3]) or 0) > now then return {} end
if (order[4] or '') ~= ARGV[3] then return {} end
-- The time index shares the lanes index's slot tag (`slotIndexKey`).
return_lapsed_holder(KEYS[2], KEYS[3], ARGV[2], now, nil, string.sub(KEYS[1], 1, #KEYS[1] - #':lanes') .. ':time-index')
local first = first_waiter(KEYS[3], ARGV[2], now, nil)
if not first then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {}
end
if first == 'later' or first == 'busy' or first == 'held' then return {} end
local lease, retention = tonumber(ARGV[4]), tonumber(ARGV[5])
local head = ARGV[2] .. first
redis.call('HSET', KEYS[2], 'runnerUntil', int(now + lease), 'drain', head)
redis.call('HDEL', KEYS[2], 'wokenBy')
if redis.call('PTTL', KEYS[2]) < lease then redis.call('PEXPIRE', KEYS[2], int(math.max(retention, lease))) end
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
return {first, redis.call('HGET', KEYS[4], head) or ''}
