-- Keeps a notification's copy in a ledger part. KEYS: the part's jobs hash and since set. ARGV: id, data, epoch ms.

redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
