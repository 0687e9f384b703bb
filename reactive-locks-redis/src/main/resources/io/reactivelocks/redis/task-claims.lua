-- Task queue: the claims held now, for the admin's list (read only).
--
-- KEYS[1]  task records, KEYS[2] claimed tasks (score = expiry in server ms)
--
-- Returns {id, token, owner, remaining ms, ...} for every claim whose expiry is still ahead by the
-- server's clock (ids in their tag encoding).
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. nowMs, '+inf', 'WITHSCORES')
local out = {}
for i = 1, #live, 2 do
  local rec = redis.call('HGET', KEYS[1], live[i])
  if rec then
    local s, r, f, n, t, o = string.match(rec, '^(%a)|(%d+)|(%d+)|(%d+)|(%d+)|(.*)$')
    if s == 'c' then
      out[#out + 1] = live[i]
      out[#out + 1] = t
      out[#out + 1] = o
      out[#out + 1] = tonumber(live[i + 1]) - nowMs
    end
  end
end
return out
