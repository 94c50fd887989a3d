--@include owned-processing-or-queued

redis.call('DEL', KEYS[1])
return 1
