-- Reads the holder of a lock.
--
-- KEYS[1]  the lock key ("<token>:<owner>", or "<token>:<owner>\n<payload>" with a payload)
--
-- Returns {token, pttl, owner, has, payload} while held (pttl in ms, -1 when the key has no TTL; has
-- 1 when a payload is stored, 0 when not, payload '' then), {} when free.
local current = redis.call('GET', KEYS[1])
if not current then
  return {}
end
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
return {token, redis.call('PTTL', KEYS[1]), owner, has, payload}
