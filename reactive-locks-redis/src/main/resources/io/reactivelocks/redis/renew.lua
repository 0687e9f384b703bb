-- Renews many leases in one call (all KEYS must share a cluster slot).
--
-- KEYS[i]      the lock key of lease i
-- ARGV[3i-2]   owner id of lease i
-- ARGV[3i-1]   fencing token of lease i
-- ARGV[3i]     lease time in ms
--
-- Returns one integer per lease: 1 when the key still holds exactly "<token>:<owner>" and its TTL
-- was set again, 0 otherwise (gone, or another owner or grant).
local result = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[3 * i - 1] .. ':' .. ARGV[3 * i - 2] then
    redis.call('PEXPIRE', KEYS[i], ARGV[3 * i])
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
