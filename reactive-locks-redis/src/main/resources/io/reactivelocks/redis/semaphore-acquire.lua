-- Grants permits of a semaphore if enough are free, atomically.
--
-- KEYS[1]  the holders: sorted set, member = owner id, score = expiry in server ms
-- KEYS[2]  the tokens: hash, owner id -> fencing token
-- KEYS[3]  the fence key (integer counter, PX = fence TTL)
-- ARGV[1]  N, the most holders the semaphore may have at the time of this grant
-- ARGV[2]  lease time in ms
-- ARGV[3]  fence counter TTL in ms
-- ARGV[4]  the semaphore's pub/sub channel (releases)
-- ARGV[5]  the channel of its grants ("acquired:<token>:<owner>"), which only observers subscribe to
-- ARGV[6..] the owner ids asking, one permit each
--
-- Returns {1, token...}      granted, one token per owner (also for owners that hold already: same tokens, TTL set again)
--         {0, ms}            not enough permits free: the earliest holder's remaining TTL in ms
--
-- Expired holders count only when they are in the way: they are removed (and "released:<owner>"
-- published for each) when the unexpired-or-not holders leave too few permits, so an uncontended
-- grant reads no range (9 commands: no holders, so none of them is ours to look for). Until then they hold no permit anywhere it matters: renewals
-- and the holders' list check the expiry. Tokens are max(counter + 1, server TIME in µs), as a
-- lock's: strictly increasing per name, across restarts.
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lease = tonumber(ARGV[2])
local out = {1}
-- no holders: not ours either (a retried call finds its own first owner among them), one command fewer
local held = redis.call('ZCARD', KEYS[1])
if held > 0 and redis.call('ZSCORE', KEYS[1], ARGV[6]) then
  for i = 6, #ARGV do
    redis.call('ZADD', KEYS[1], nowms + lease, ARGV[i])
    out[#out + 1] = redis.call('HGET', KEYS[2], ARGV[i]) or '0'
  end
else
  local k = #ARGV - 5
  if held + k > tonumber(ARGV[1]) then
    for _, owner in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowms)) do
      redis.call('ZREM', KEYS[1], owner)
      redis.call('HDEL', KEYS[2], owner)
      redis.call('PUBLISH', ARGV[4], 'released:' .. owner)
      held = held - 1
    end
    if held + k > tonumber(ARGV[1]) then
      local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
      return {0, tonumber(first[2]) - nowms}
    end
  end
  local nowus = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local token = tonumber(redis.call('GET', KEYS[3]) or '0')
  for i = 6, #ARGV do
    token = token + 1
    if token < nowus then
      token = nowus
    end
    local t = string.format('%.0f', token)
    redis.call('ZADD', KEYS[1], nowms + lease, ARGV[i])
    redis.call('HSET', KEYS[2], ARGV[i], t)
    redis.call('PUBLISH', ARGV[5], 'acquired:' .. t .. ':' .. ARGV[i])
    out[#out + 1] = t
  end
  redis.call('SET', KEYS[3], out[#out], 'PX', ARGV[3])
  if held == 0 then
    -- the new holders are the only ones: the keys live as long as they do
    redis.call('PEXPIRE', KEYS[1], lease)
    redis.call('PEXPIRE', KEYS[2], lease)
    return out
  end
end
-- both keys live as long as their longest holder
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local ttl = math.max(1, tonumber(last[2]) - nowms)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return out
