-- Grants a lock: SET NX PX semantics plus a fencing token, atomically.
--
-- KEYS[1]  the lock key   ("<token>:<owner>", PX = lease)
-- KEYS[2]  the fence key  (integer counter, PX = fence TTL)
-- ARGV[1]  owner id
-- ARGV[2]  lease time in ms
-- ARGV[3]  fence counter TTL in ms
-- ARGV[4]  the lock's pub/sub channel
--
-- Returns {1, token}                     granted (also when this owner already holds it: same token, TTL set again)
--         {0, token, pttl, owner}        busy: the holder's token, remaining TTL in ms and owner
--
-- The token is max(counter + 1, server TIME in microseconds): strictly increasing per name, and
-- still increasing after a restart that lost the counter (no persistence), because the clock has
-- moved on. Numbers stay below 2^53 (until the year 2255), so Lua doubles hold them exactly.
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  local token, owner = '0', current
  if sep then
    token = string.sub(current, 1, sep - 1)
    owner = string.sub(current, sep + 1)
  end
  if owner == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, token}
  end
  return {0, token, redis.call('PTTL', KEYS[1]), owner}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local token = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if token < now then
  token = now
end
token = string.format('%.0f', token)
redis.call('SET', KEYS[2], token, 'PX', ARGV[3])
redis.call('SET', KEYS[1], token .. ':' .. ARGV[1], 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[4], 'acquired:' .. token .. ':' .. ARGV[1])
return {1, token}
