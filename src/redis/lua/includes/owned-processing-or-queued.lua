-- The caller still owns the record (ARGV[1]) and it is processing or queued; otherwise the script answers 0.

local current = redis.call('HMGET', KEYS[1], 'state', 'owner')
if current[2] ~= ARGV[1] then return 0 end
if current[1] ~= 'processing' and current[1] ~= 'queued' then return 0 end
