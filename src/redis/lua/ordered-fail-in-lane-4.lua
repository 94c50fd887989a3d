--@include prelude
--@include owned-processing
--@include fail-record
--@include leave-list
--@include let-go

-- On a lane whose policy is hold, the dead letter goes back to its place at the head of the list,
-- failed: `first_waiter` answers 'held' for it, so nothing behind it runs until its redriven job's
-- claim takes it, or a person completes it (discard). ARGV[4]: its id.
if redis.call('HGET', KEYS[2], 'hold') ~= '1' then return 1 end
local member = (redis.call('HGET', KEYS[1], 'position') or '') .. '\n' .. ARGV[4]
redis.call('HSET', KEYS[1], 'waiting', member)
redis.call('ZADD', KEYS[3], 0, member)
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
return 2
