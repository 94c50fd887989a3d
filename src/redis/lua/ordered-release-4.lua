--@include prelude
--@include owned-processing-or-queued
--@include leave-list
--@include let-go

if redis.call('HGET', KEYS[2], 'wokenBy') == ARGV[1] then redis.call('HDEL', KEYS[2], 'runnerUntil', 'wokenBy') end
redis.call('DEL', KEYS[1])
return 1
