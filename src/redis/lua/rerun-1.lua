-- Mark a failed record that keeps an in-process queue's job data to run again: processing under a
-- lease already lapsed, so the next sweep of a receiver on this store takes it over and runs it.
-- ARGV: owner (the redrive's), retentionMs.
--@include prelude

local record = redis.call('HMGET', KEYS[1], 'state', 'carried')
if record[1] ~= 'failed' or not record[2] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'processing', 'owner', ARGV[1], 'leaseUntil', int(now_ms()))
redis.call('HDEL', KEYS[1], 'error')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
