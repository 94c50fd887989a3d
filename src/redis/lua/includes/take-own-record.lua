-- `TAKE_RECORD` for a record of its own (no order key): its hash holds only the fields the fresh
-- record writes (state, fingerprint, owner, leaseUntil, attempts) unless it failed (`error`), so only
-- a failed one is deleted before them; a queued one, a worker's usual claim, is written over in place.

local attempts = (tonumber(record[5]) or 0) + 1
-- A worker's queue count of this run (CLAIM's ARGV[8]), when given, is kept, never counting back: a
-- queued record (or the receiver's claim a worker was handed) counts the run it waits for already.
local queue_count = tonumber(ARGV[8] or '')
if queue_count then
  local counted = attempts
  if state == 'queued' or (state == 'processing' and handoff ~= '' and record[6] == handoff) then
    counted = attempts - 1
  end
  attempts = math.max(queue_count, counted)
end
if state == 'failed' then redis.call('DEL', key) end
redis.call('HSET', key, 'state', 'processing', 'fingerprint', fingerprint, 'owner', owner,
  'leaseUntil', int(now + lease), 'attempts', attempts)
redis.call('PEXPIRE', key, int(math.max(retention, lease)))
