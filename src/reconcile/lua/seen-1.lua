-- A subscription's record is replaced only by a newer notification (a late retry of an older one is not).
local current = redis.call("HGET", KEYS[1], ARGV[1])
if current and cjson.decode(current).position >= ARGV[2] then return 0 end
redis.call("HSET", KEYS[1], ARGV[1], ARGV[3]) return 1