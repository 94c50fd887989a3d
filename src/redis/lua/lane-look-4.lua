-- Whether an order key's lane is stalled, for the sweep: notifications wait in it (its head queued, or
-- a holder that died put back in line), and no worker holds it under a live lease, nor waits for a
-- retry, nor is it held by a dead letter. Whether its drain job is still in the queue is the sweep's
-- to ask next (a stalled lane here may have one waiting behind a backlog).
-- KEYS: the lanes index, the order hash, its lane, its carried data. ARGV: the index member
-- (the order hash key), the record key prefix, how the data kept by the sweeping queue's lanes ends
-- ('' for any queue; see `lane-queue.ts`), and the epoch ms from which a receiver's wake still counts as
-- on its way (its drain job's add not answered yet: the lane is not stalled).
-- Returns {'other'} (another queue's lane: left as it was, for that queue's sweep), {'gone'} (nothing waits: the lane leaves the index), {'running'}, {'held'}, {'busy'} (the
-- head is still being handed over), or {'stalled', head id, the record key of the notification whose
-- job was queued to run the lane last, or ''}. A lane that does not leave is scored now, so the next
-- look at it comes an interval later.
--@include prelude
--@include before
--@include waiting

local now = now_ms()
local order = redis.call('HMGET', KEYS[2], 'owner', 'leaseUntil', 'retryUntil', 'drain', 'wokenBy', 'wokenAt')
local waking = order[5] and (tonumber(order[6]) or 0) >= tonumber(ARGV[4])
if waking or (order[1] and (tonumber(order[2]) or 0) > now) or (tonumber(order[3]) or 0) > now then
  redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
  return {'running'}
end
-- The time index shares the lanes index's slot tag (`slotIndexKey`).
return_lapsed_holder(KEYS[2], KEYS[3], ARGV[2], now, nil, string.sub(KEYS[1], 1, #KEYS[1] - #':lanes') .. ':time-index')
local first = first_waiter(KEYS[3], ARGV[2], now, nil)
if not first then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {'gone'}
end
if first == 'later' or first == 'busy' or first == 'held' then
  redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
  return {first == 'later' and 'running' or first}
end
local carried = redis.call('HGET', KEYS[4], ARGV[2] .. first) or ''
local named = string.match(carried, ',"queue":"[^"\\]*"}$')
if ARGV[3] ~= '' and named and named ~= ARGV[3] then return {'other'} end
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
return {'stalled', first, order[4] or ''}
