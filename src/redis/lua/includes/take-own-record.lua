-- `TAKE_RECORD` for a record of its own (no order key): its hash holds only the fields the fresh
-- record writes (state, fingerprint, owner, leaseUntil, attempts) unless it failed (`error`), so only
-- a failed one is deleted before them; a queued one, a worker's usual claim, is written over in place.

local attempts = (tonumber(record[5]) or 0) + 1
if state == 'failed' then redis.call('DEL', key) end
redis.call('HSET', key, 'state', 'processing', 'fingerprint', fingerprint, 'owner', owner,
  'leaseUntil', int(now + lease), 'attempts', attempts)
redis.call('PEXPIRE', key, int(math.max(retention, lease)))
