
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'leaseUntil', int(now_ms() + lease))
redis.call('PEXPIRE', KEYS[1], int(math.max(tonumber(ARGV[3]), lease)))
