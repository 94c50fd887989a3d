
redis.call('HSET', KEYS[1], 'state', 'queued')
redis.call('HDEL', KEYS[1], 'leaseUntil')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
