-- Absent, failed, lease lapsed, or queued and taken by a worker: the caller owns a fresh record,
-- under the fingerprint of the payload it is about to run.

local attempts = (tonumber(record[5]) or 0) + 1
redis.call('DEL', key)
redis.call('HSET', key, 'state', 'processing', 'fingerprint', fingerprint, 'owner', owner,
  'leaseUntil', int(now + lease), 'attempts', attempts)
redis.call('PEXPIRE', key, int(math.max(retention, lease)))
