-- Grants a lock: SET NX PX semantics plus a fencing token, atomically.
--
-- KEYS[1]  the lock key   ("<token>:<owner>", or "<token>:<owner>\n<payload>" with a payload; PX = lease)
-- KEYS[2]  the fence key  (integer counter, PX = fence TTL)
-- ARGV[1]  owner id
-- ARGV[2]  lease time in ms
-- ARGV[3]  fence counter TTL in ms
-- ARGV[4]  the lock's grants channel (observers subscribe to it; waiters listen for releases only)
-- ARGV[5]  '1' when the grant carries a payload, '0' when not
-- ARGV[6]  the payload (ignored unless ARGV[5] is '1')
--
-- Returns {1, token}                               granted (also when this owner already holds it: same
--                                                  token and payload, TTL set again)
--         {0, token, pttl, owner, has, payload}    busy: the holder's token, remaining TTL in ms, owner,
--                                                  1/0 whether it stored a payload, and the payload ('' if none)
--
-- The token is max(counter + 1, server TIME in microseconds): strictly increasing per name, and
-- still increasing after a restart that lost the counter (no persistence), because the clock has
-- moved on. Numbers stay below 2^53 (until the year 2255), so Lua doubles hold them exactly.
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  local token, owner, has, payload = '0', current, 0, ''
  if sep then
    token = string.sub(current, 1, sep - 1)
    owner = string.sub(current, sep + 1)
    local nl = string.find(owner, '\n', 1, true)
    if nl then
      has, payload = 1, string.sub(owner, nl + 1)
      owner = string.sub(owner, 1, nl - 1)
    end
  end
  if owner == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, token}
  end
  return {0, token, redis.call('PTTL', KEYS[1]), owner, has, payload}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local token = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if token < now then
  token = now
end
token = string.format('%.0f', token)
redis.call('SET', KEYS[2], token, 'PX', ARGV[3])
local value = token .. ':' .. ARGV[1]
if ARGV[5] == '1' then
  value = value .. '\n' .. ARGV[6]
end
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[4], 'acquired:' .. token .. ':' .. ARGV[1])
return {1, token}
