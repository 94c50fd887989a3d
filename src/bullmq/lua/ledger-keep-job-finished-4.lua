-- Both at once (one Redis): the copy kept, then 1 when the job is in the failed or completed set.
-- KEYS: jobs, since, failed, completed. ARGV: id, data, epoch ms, job id.
--@include keep

if redis.call('ZSCORE', KEYS[3], ARGV[4]) or redis.call('ZSCORE', KEYS[4], ARGV[4]) then return 1 end
return 0
