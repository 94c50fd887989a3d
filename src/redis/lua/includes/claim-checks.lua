-- The checks of a claim on the record itself, answering when it cannot be taken. ARGV: fingerprint,
-- owner, leaseMs, takeQueued ('1' or '0'), retentionMs; the script defines `handoff` before them
-- (the owner token of a receiver whose processing claim a worker may take over, or '') and
-- `to_queue` (a receiver's claim for a durable queue, which writes the record queued at once).

local key = KEYS[1]
local fingerprint, owner, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local take_queued, retention = ARGV[4] == '1', tonumber(ARGV[5])
local now = now_ms()
local record = redis.call('HMGET', key, 'state', 'fingerprint', 'leaseUntil', 'answer', 'attempts', 'owner')
local state = record[1]
-- Whether the record can be taken over is decided first; the payload is compared only against a
-- completed record, the one case where a different payload under the id is a sender's error.
if state == 'completed' then
  if record[2] ~= fingerprint then return {'conflict'} end
  return {'completed', record[4]}
end
if state == 'processing' and not (take_queued and handoff ~= '' and record[6] == handoff) then
  -- A worker may take over the claim of the receiver that queued its job (before it marked it queued).
  local lease_until = tonumber(record[3])
  if lease_until and lease_until > now then return {'processing', lease_until - now} end
end
if state == 'queued' and not take_queued then
  -- Another payload under a queued id waits for the queued one's outcome instead of being acknowledged.
  if record[2] ~= fingerprint then return {'processing', lease} end
  return {'queued'}
end
if state == 'queued' and to_queue then
  -- A receiver taking over a queued record whose job is missing: while the hand-off lease of the
  -- receiver that queued it at claim is live, its job may still be on its way.
  local lease_until = tonumber(record[3])
  if lease_until and lease_until > now then return {'processing', lease_until - now} end
end
