-- Renews many leases in one call (all KEYS must share a cluster slot).
--
-- KEYS[i]      the lock key of lease i
-- ARGV[1]      the lease time in ms (one for every lease of the call)
-- ARGV[i + 1]  the grant of lease i: "<token>:<owner>"
--
-- Returns one integer per lease: 1 when the key still holds the grant (followed by nothing or by
-- "\n<payload>") and its TTL was set again, 0 otherwise (gone, or another owner or grant).
local result = {}
local ms = ARGV[1]
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  local grant = ARGV[i + 1]
  if current and (current == grant or string.sub(current, 1, #grant + 1) == grant .. '\n') then
    redis.call('PEXPIRE', KEYS[i], ms)
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
