--@include prelude
--@include before
--@include waiting
--@include take-next

return take_next(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], KEYS[4])
