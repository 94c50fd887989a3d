
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local bound = redis.call('HMGET', KEYS[1], 'key', 'since')
if bound[1] and bound[1] ~= ARGV[1] and bound[1] ~= ARGV[3] then
  return {bound[1], now - (tonumber(bound[2]) or now)}
end
if bound[1] ~= ARGV[1] then redis.call('HSET', KEYS[1], 'key', ARGV[1], 'since', string.format('%.0f', now)) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {}
