-- Take over a record whose claim lapsed and which keeps an in-process queue's job data: the new owner
-- holds it for a lease, one attempt more, the data kept. ARGV: owner, leaseMs.
--@include prelude

local record = redis.call('HMGET', KEYS[1], 'state', 'leaseUntil', 'carried', 'attempts')
if record[1] ~= 'processing' or not record[3] then return 0 end
local now = now_ms()
local lease_until = tonumber(record[2])
if lease_until and lease_until > now then return 0 end
local attempts = (tonumber(record[4]) or 0) + 1
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'leaseUntil', int(now + tonumber(ARGV[2])), 'attempts', attempts)
return {attempts, record[3]}
