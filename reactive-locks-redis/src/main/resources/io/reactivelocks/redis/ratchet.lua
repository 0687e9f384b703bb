-- Quorum mode: after a majority granted, raise this instance's fencing state to the quorum token.
--
-- KEYS[1]  the lock key   ("<token>:<owner>", or "<token>:<owner>\n<payload>")
-- KEYS[2]  the fence key  (integer counter)
-- ARGV[1]  owner id
-- ARGV[2]  the quorum token (max of the granting instances' tokens)
-- ARGV[3]  fence counter TTL in ms
-- ARGV[4]  the lock's pub/sub channel
--
-- Returns 1 when this owner still holds the lock here: the counter is now max(counter, token), the
-- lock value carries the quorum token (TTL and payload kept) and "acquired:<token>:<owner>" is published again,
-- so observers re-read the now final holder; 0 when the owner no longer holds it here.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local sep = string.find(current, ':', 1, true)
if not sep then
  return 0
end
local rest = string.sub(current, sep + 1)
local owner, tail = rest, ''
local nl = string.find(rest, '\n', 1, true)
if nl then
  owner, tail = string.sub(rest, 1, nl - 1), string.sub(rest, nl)
end
if owner ~= ARGV[1] then
  return 0
end
local token = tonumber(ARGV[2])
local counter = tonumber(redis.call('GET', KEYS[2]) or '0')
if counter < token then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
redis.call('SET', KEYS[1], ARGV[2] .. ':' .. ARGV[1] .. tail, 'KEEPTTL')
redis.call('PUBLISH', ARGV[4], 'acquired:' .. ARGV[2] .. ':' .. ARGV[1])
return 1
