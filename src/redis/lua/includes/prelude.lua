-- Shared helpers: the server's time in epoch ms, and integers formatted without an exponent.

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function int(n)
  return string.format('%.0f', n)
end
