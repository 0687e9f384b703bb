-- Fenced write on an application's key: sets fields of the hash KEYS[1] only when the writer's token is
-- at least the fence kept in one of its fields (Fencing.admits: equal = the same grant writing again),
-- and stores the token as the new fence, atomically. A key that does not exist admits any token.
--
-- KEYS[1]  the application's hash
-- ARGV[1]  the writer's token (decimal, as Java's Long.toString writes it)
-- ARGV[2]  the name of the fence field
-- ARGV[3], ARGV[4], ...  field, value pairs to set (at least one pair)
--
-- Returns {1} when written, {0, fence} when refused (the hash unchanged). Tokens are compared as decimal
-- strings, exactly over the whole long range (Lua numbers are doubles, exact only below 2^53).
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
local fence = redis.call('HGET', KEYS[1], ARGV[2])
if fence then
  if not (fence == '0' or string.match(fence, '^%-?[1-9]%d*$')) or #fence > 20 then
    return redis.error_reply('ERR fenced write: field ' .. ARGV[2] .. ' does not hold a token')
  end
  if compare(ARGV[1], fence) < 0 then
    return {0, fence}
  end
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[1], unpack(ARGV, 3))
return {1}
