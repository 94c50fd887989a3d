-- Hand the order key, if free, to the first waiting notification of its list, claimed for `owner`: {} when there is
-- none (or the key is held, or the head waits for its retry or is still being handed over), else the
-- claim as run_waiter answers it.

local function take_next(order_key, waiting, carried_key, owner, lease, retention, rec_prefix, index)
  local now = now_ms()
  local order = redis.call('HMGET', order_key, 'position', 'owner', 'leaseUntil')
  if order[2] and tonumber(order[3]) and tonumber(order[3]) > now then return {} end
  return_lapsed_holder(order_key, waiting, rec_prefix, now, nil, index)
  local first, first_pos, first_member = first_waiter(waiting, rec_prefix, now, nil)
  -- The head waits for its retry: the runner that put it back comes again then (see ORDERED_RETRY).
  if first == 'later' then return {} end
  if not first or first == 'busy' or first == 'held' then
    -- The runner stops here: an append from now on wakes a new one (ORDERED_MARK_WAITING), one before
    -- this was in the list to be found; a head still being handed over wakes one when it is marked; a
    -- dead letter holding the lane, its redriven job (or, discarded, the job the console puts back).
    redis.call('HDEL', order_key, 'runnerUntil', 'wokenBy')
    return {}
  end
  return run_waiter(waiting, order_key, carried_key, rec_prefix, first, first_pos, first_member, order[1], owner, lease, retention, now)
end
