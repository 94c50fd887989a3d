--@include prelude
--@include owned-processing
--@include mark-queued-record
--@include let-go
--@include lane-index

local now = now_ms()
list_lane(KEYS[5], KEYS[2], now, tonumber(ARGV[2]))
local order = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil', 'runnerUntil')
local held = order[1] and (tonumber(order[2]) or 0) > now
if held or (tonumber(order[3]) or 0) > now then return {1, 0} end
local lease = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], 'runnerUntil', int(now + lease), 'wokenBy', ARGV[1], 'wokenAt', int(now), 'drain', KEYS[1])
if redis.call('PTTL', KEYS[2]) < lease then redis.call('PEXPIRE', KEYS[2], int(math.max(tonumber(ARGV[2]), lease))) end
return {1, 1}
