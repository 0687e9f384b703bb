-- Renews permits of one semaphore (or grants of one read-write lock), owner- and token-checked.
--
-- KEYS[1]  the holders (sorted set: owner -> expiry in server ms)
-- KEYS[2]  the tokens (hash: owner -> token)
-- KEYS[3..] further keys that live as long as the holders (a read-write lock's modes)
-- ARGV[1]  lease time in ms
-- ARGV[2], ARGV[3], ...  owner id, token of each permit
--
-- Returns one integer per permit: 1 renewed, 0 not held (expired, released, or another token).
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 2 do
  local owner, token = ARGV[i], ARGV[i + 1]
  local expiry = redis.call('ZSCORE', KEYS[1], owner)
  if expiry and tonumber(expiry) > nowms and redis.call('HGET', KEYS[2], owner) == token then
    redis.call('ZADD', KEYS[1], nowms + lease, owner)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  local ttl = math.max(1, tonumber(last[2]) - nowms)
  for i = 1, #KEYS do
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return out
