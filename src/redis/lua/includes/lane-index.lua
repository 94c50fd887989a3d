-- The lanes index (see `lane-index.ts`): a sorted set of order hashes, scored by the epoch ms of their
-- lane's last append (or the sweep's last look), in the lane's own hash slot, so the script that
-- appends lists the lane in the same atomic step. The sweep finds a lane whose drain job was lost by
-- it, from the store's side: a lane stays listed while notifications wait in it.

local function list_lane(lanes, order_key, now, retention)
  redis.call('ZADD', lanes, now, order_key)
  -- Lanes untouched past the retention (their records have expired) go, on about one write in 16.
  if now % 16 == 0 then redis.call('ZREMRANGEBYSCORE', lanes, '-inf', '(' .. int(now - retention)) end
  redis.call('PEXPIRE', lanes, int(retention))
end
