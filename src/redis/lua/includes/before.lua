-- Whether position `a` is an earlier instant than `b`, byte by byte: the sortable form orders that
-- way, and Lua's own `<` on strings follows the server's locale.

local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
