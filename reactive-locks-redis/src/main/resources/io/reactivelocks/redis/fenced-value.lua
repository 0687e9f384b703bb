-- Fenced value: writes or deletes a value only when the writer's token is at least the fence kept
-- beside it (Fencing.admits: equal = the same grant writing again), raising the fence, atomically.
--
-- KEYS[1]  the value's hash: field "value" (absent after a delete), field "fence" (decimal token)
-- ARGV[1]  the writer's token (decimal, as Java's Long.toString writes it)
-- ARGV[2]  "w" to write, "d" to delete
-- ARGV[3]  the value (for "w")
--
-- Returns 1 when admitted, 0 when refused. Tokens are compared as decimal strings, exactly over
-- the whole long range (Lua numbers are doubles, exact only below 2^53).
local function compare(a, b)
  local na, nb = string.sub(a, 1, 1) == '-', string.sub(b, 1, 1) == '-'
  if na ~= nb then
    return na and -1 or 1
  end
  local r
  if a == b then
    return 0
  elseif #a ~= #b then
    r = (#a < #b) and -1 or 1
  else
    r = (a < b) and -1 or 1
  end
  if na then
    return -r
  end
  return r
end
local fence = redis.call('HGET', KEYS[1], 'fence')
if fence and compare(ARGV[1], fence) < 0 then
  return 0
end
if ARGV[2] == 'd' then
  redis.call('HDEL', KEYS[1], 'value')
  redis.call('HSET', KEYS[1], 'fence', ARGV[1])
else
  redis.call('HSET', KEYS[1], 'value', ARGV[3], 'fence', ARGV[1])
end
return 1
