-- The claim ends: its key, if it held it, is free for the next notification, and how long it was held
-- is kept (`lastHeldMs`) to tell the next in-process delivery how long it may wait. ARGV[1] is the owner.

if redis.call('HGET', KEYS[1], 'holdsKey') == '1' then
  redis.call('HDEL', KEYS[1], 'holdsKey')
  local order = redis.call('HMGET', KEYS[2], 'owner', 'heldSince')
  if order[1] == ARGV[1] then
    if order[2] then redis.call('HSET', KEYS[2], 'lastHeldMs', int(now_ms() - tonumber(order[2]))) end
    redis.call('HDEL', KEYS[2], 'owner', 'leaseUntil', 'heldSince', 'holder')
  end
end
