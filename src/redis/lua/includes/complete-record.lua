
redis.call('HSET', KEYS[1], 'state', 'completed', 'answer', ARGV[2])
redis.call('HDEL', KEYS[1], 'leaseUntil', 'error', 'carried')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
