--@include prelude
--@include before
--@include waiting

local order_key, waiting, owner, rec_prefix = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
if redis.call('HGET', order_key, 'owner') ~= owner then return 0 end
-- Its lease ends now, on the key and on its record: then it goes back as a dead holder's would.
local now = now_ms()
local holder = redis.call('HGET', order_key, 'holder')
if holder and redis.call('HGET', rec_prefix .. holder, 'owner') == owner then
  redis.call('HSET', rec_prefix .. holder, 'leaseUntil', int(now))
end
redis.call('HSET', order_key, 'leaseUntil', int(now))
-- KEYS[4]: the time index, when the store keeps one.
return_lapsed_holder(order_key, waiting, rec_prefix, now, nil, KEYS[4])
redis.call('HDEL', order_key, 'owner', 'leaseUntil', 'heldSince')
return 1
