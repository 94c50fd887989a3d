-- KEYS: the part's jobs hash and since set. ARGV: the ids whose copies go.

redis.call('HDEL', KEYS[1], unpack(ARGV))
redis.call('ZREM', KEYS[2], unpack(ARGV))
return 1
