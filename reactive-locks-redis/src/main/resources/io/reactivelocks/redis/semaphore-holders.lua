-- Lists the unexpired holders of a semaphore (read only).
--
-- KEYS[1]  the holders (sorted set: owner -> expiry in server ms)
-- KEYS[2]  the tokens (hash: owner -> token)
--
-- Returns {owner, token, remaining ms, owner, token, remaining ms, ...}.
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. nowms, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = redis.call('HGET', KEYS[2], live[i]) or '0'
  out[#out + 1] = tonumber(live[i + 1]) - nowms
end
return out
