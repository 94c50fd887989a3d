
redis.call('HSET', KEYS[1], 'state', 'failed', 'error', ARGV[2])
redis.call('HDEL', KEYS[1], 'leaseUntil')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
