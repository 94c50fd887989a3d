-- The record completed: its key's newest completed position moves forward to the record's, never back.

local position = redis.call('HGET', KEYS[1], 'position')
if position and position ~= '' then
  local newest = redis.call('HGET', KEYS[2], 'position')
  if not newest or before(newest, position) then redis.call('HSET', KEYS[2], 'position', position) end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
