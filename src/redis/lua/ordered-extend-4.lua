--@include prelude
--@include owned-processing

if redis.call('HGET', KEYS[1], 'holdsKey') == '1' then
  local order = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil')
  local now = now_ms()
  if order[1] and order[1] ~= ARGV[1] and tonumber(order[2]) > now then return 0 end
  local lease = tonumber(ARGV[2])
  redis.call('HSET', KEYS[2], 'owner', ARGV[1], 'leaseUntil', int(now + lease))
  redis.call('PEXPIRE', KEYS[2], int(math.max(tonumber(ARGV[3]), lease)))
end
--@include extend-record

return 1
