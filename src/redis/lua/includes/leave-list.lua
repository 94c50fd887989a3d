-- A record that stops waiting in its key's list (run, failed, released) leaves it, and its data goes.

redis.call('HDEL', KEYS[4], KEYS[1])
local member = redis.call('HGET', KEYS[1], 'waiting')
if member then
  redis.call('ZREM', KEYS[3], member)
  redis.call('HDEL', KEYS[1], 'waiting')
end
