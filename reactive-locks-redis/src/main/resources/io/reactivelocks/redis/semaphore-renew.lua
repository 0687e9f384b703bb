-- Renews permits of semaphores (or grants of read-write locks), owner- and token-checked: the permits
-- of a whole renewal batch in one call (on a cluster, of one slot).
--
-- KEYS     one group of ARGV[1] keys per name: the holders (sorted set: owner -> expiry in server ms),
--          the tokens (hash: owner -> token), then further keys that live as long as the holders (a
--          read-write lock's modes)
-- ARGV[1]  the keys per name
-- ARGV[2..] four per permit: its name's group (1-based), lease time in ms, owner id, token
--
-- Returns one integer per permit: 1 renewed, 0 not held (expired, released, or another token). The
-- keys of a name with a permit renewed live as long as its longest holder.
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local width = tonumber(ARGV[1])
local out = {}
local renewed = {}
for i = 2, #ARGV, 4 do
  local base = (tonumber(ARGV[i]) - 1) * width
  local owner, token = ARGV[i + 2], ARGV[i + 3]
  local expiry = redis.call('ZSCORE', KEYS[base + 1], owner)
  if expiry and tonumber(expiry) > nowms and redis.call('HGET', KEYS[base + 2], owner) == token then
    redis.call('ZADD', KEYS[base + 1], nowms + tonumber(ARGV[i + 1]), owner)
    renewed[base] = true
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
for base in pairs(renewed) do
  local last = redis.call('ZRANGE', KEYS[base + 1], -1, -1, 'WITHSCORES')
  if last[2] then
    local ttl = math.max(1, tonumber(last[2]) - nowms)
    for j = 1, width do
      redis.call('PEXPIRE', KEYS[base + j], ttl)
    end
  end
end
return out
