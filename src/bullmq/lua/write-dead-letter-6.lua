
local job_key, failed, events, wait, delayed, prioritized = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id = ARGV[1]
if redis.call('EXISTS', job_key) == 1 and not redis.call('ZSCORE', failed, id) then
  local moved = redis.call('LREM', wait, 0, id) + redis.call('ZREM', delayed, id) + redis.call('ZREM', prioritized, id)
  if moved == 0 then return 0 end
end
redis.call('HSET', job_key, 'name', ARGV[2], 'data', ARGV[3], 'opts', ARGV[4], 'timestamp', ARGV[5],
  'delay', 0, 'priority', 0, 'atm', ARGV[6], 'ats', ARGV[6], 'failedReason', ARGV[7],
  'processedOn', ARGV[8], 'finishedOn', ARGV[8], 'stacktrace', '[]')
redis.call('ZADD', failed, ARGV[8], id)
redis.call('XADD', events, 'MAXLEN', '~', 10000, '*', 'event', 'failed', 'jobId', id, 'failedReason', ARGV[7], 'prev', 'active')
return 1
