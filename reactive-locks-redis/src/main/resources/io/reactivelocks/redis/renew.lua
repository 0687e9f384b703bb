-- Renews many leases in one call (all KEYS must share a cluster slot).
--
-- KEYS[i]      the lock key of lease i
-- ARGV[3i-2]   owner id of lease i
-- ARGV[3i-1]   fencing token of lease i
-- ARGV[3i]     lease time in ms
--
-- Returns one integer per lease: 1 when the key still holds "<token>:<owner>" (followed by nothing or
-- by "\n<payload>") and its TTL was set again, 0 otherwise (gone, or another owner or grant).
local result = {}
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  local grant = ARGV[3 * i - 1] .. ':' .. ARGV[3 * i - 2]
  if current and (current == grant or string.sub(current, 1, #grant + 1) == grant .. '\n') then
    redis.call('PEXPIRE', KEYS[i], ARGV[3 * i])
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
