--@include prelude

local handoff = ARGV[6] or ''
local to_queue = ARGV[7] == '1'
--@include claim-checks
--@include take-own-record

if to_queue then
  redis.call('HSET', key, 'state', 'queued')
  return {'queued_at_claim', attempts}
end
return attempts
