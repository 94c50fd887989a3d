-- Keep an in-process queue's job data in the record its claim owns, beside its state, so a receiver
-- on this store can run the notification if the one that accepted it dies. ARGV: owner, data.
--@include owned-processing

redis.call('HSET', KEYS[1], 'carried', ARGV[2])
return 1
