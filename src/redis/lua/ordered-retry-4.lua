--@include prelude
--@include owned-processing
--@include let-go

local now = now_ms()
local retry_at = now + tonumber(ARGV[4])
local member = (redis.call('HGET', KEYS[1], 'position') or '') .. '\n' .. ARGV[6]
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
