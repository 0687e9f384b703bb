-- Replaces the payload of a held grant (owner- and token-checked), keeping its TTL.
--
-- KEYS[1]  the lock key ("<token>:<owner>", or "<token>:<owner>\n<payload>")
-- ARGV[1]  owner id
-- ARGV[2]  fencing token of the grant
-- ARGV[3]  '1' to store the payload ARGV[4], '0' to remove the payload
-- ARGV[4]  the new payload
-- ARGV[5]  the lock's grants channel (as acquire.lua)
--
-- Returns 1 when the key held exactly that grant and now carries the new payload ("acquired:<token>:<owner>"
-- is published again, so observers re-read the holder), 0 when the grant is gone (nothing changed).
local current = redis.call('GET', KEYS[1])
local grant = ARGV[2] .. ':' .. ARGV[1]
if not current or (current ~= grant and string.sub(current, 1, #grant + 1) ~= grant .. '\n') then
  return 0
end
local value = grant
if ARGV[3] == '1' then
  value = value .. '\n' .. ARGV[4]
end
redis.call('SET', KEYS[1], value, 'KEEPTTL')
redis.call('PUBLISH', ARGV[5], 'acquired:' .. grant)
return 1
