--@include prelude

local handoff = ARGV[6] or ''
local to_queue = ARGV[7] == '1'
-- An in-process queue's job data, kept with the claim (RunClaim.carried), or absent.
local carried = ARGV[9] or ''
--@include claim-checks
--@include take-own-record

-- A lapsed claim taken over keeps no data of the claim before: this claim's, if any (see RESUME).
if state == 'processing' and carried == '' then redis.call('HDEL', key, 'carried') end
if to_queue then
  redis.call('HSET', key, 'state', 'queued')
  return {'queued_at_claim', attempts}
end
if carried ~= '' then
  redis.call('HSET', key, 'carried', carried)
  return {'kept', attempts}
end
return attempts
