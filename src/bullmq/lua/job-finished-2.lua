-- 1 when the job is in the failed set or the completed one, else 0.
-- KEYS: the queue's failed and completed sets. ARGV: job id.

if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 1 end
return 0
