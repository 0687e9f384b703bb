-- Reads the holder of a lock.
--
-- KEYS[1]  the lock key ("<token>:<owner>")
--
-- Returns {token, pttl, owner} while held (pttl in ms, -1 when the key has no TTL), {} when free.
local current = redis.call('GET', KEYS[1])
if not current then
  return {}
end
local sep = string.find(current, ':', 1, true)
local token, owner = '0', current
if sep then
  token = string.sub(current, 1, sep - 1)
  owner = string.sub(current, sep + 1)
end
return {token, redis.call('PTTL', KEYS[1]), owner}
