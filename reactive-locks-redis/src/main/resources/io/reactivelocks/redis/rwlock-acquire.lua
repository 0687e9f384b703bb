-- One attempt for a read or write grant of a read-write lock, atomically.
--
-- KEYS[1]  the grants: sorted set, member = owner id, score = expiry in server ms (readers and the writer)
-- KEYS[2]  the tokens: hash, owner id -> fencing token
-- KEYS[3]  the modes: hash, owner id -> 'r' or 'w'
-- KEYS[4]  the waiting writers' intents: sorted set, member = owner id, score = expiry in server ms
-- KEYS[5]  the fence key (integer counter, PX = fence TTL)
-- ARGV[1]  the owner id asking
-- ARGV[2]  'r' or 'w'
-- ARGV[3]  two flags: writer-preferring ('1': intents block readers), then waiting ('1': a refused
--          writer-preferring writer leaves an intent), e.g. '11'
-- ARGV[4]  lease time in ms (of the grant, and of a refused writer's intent)
-- ARGV[5]  fence counter TTL in ms
-- ARGV[6]  the lock's pub/sub channel
--
-- Returns {1, token}   granted (also for an owner that holds already: same token, TTL set again)
--         {0, ms}      busy: the time left of the grant (or, for a reader, intent) that ends first
--
-- Expired grants and intents are removed first (and "released:<owner>" published for each). A
-- reader is granted when no writer holds and, writer-preferring, no intent exists; a writer when no
-- one holds. Tokens are max(counter + 1, server TIME in µs), as a lock's: strictly increasing per
-- name across restarts, so a writer's token exceeds its readers' and a reader's the last writer's.
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local nowus = tonumber(time[1]) * 1000000 + tonumber(time[2])
local owner, mode, lease = ARGV[1], ARGV[2], tonumber(ARGV[4])
for _, o in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowms)) do
  redis.call('ZREM', KEYS[1], o)
  redis.call('HDEL', KEYS[2], o)
  redis.call('HDEL', KEYS[3], o)
  redis.call('PUBLISH', ARGV[6], 'released:' .. o)
end
for _, o in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowms)) do
  redis.call('ZREM', KEYS[4], o)
  redis.call('PUBLISH', ARGV[6], 'released:' .. o)
end
local function keep(key)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    local ttl = math.max(1, tonumber(last[2]) - nowms)
    redis.call('PEXPIRE', key, ttl)
    return ttl
  end
  return nil
end
local function keepGrants()
  local ttl = keep(KEYS[1])
  if ttl then
    redis.call('PEXPIRE', KEYS[2], ttl)
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
end
if redis.call('ZSCORE', KEYS[1], owner) then
  redis.call('ZADD', KEYS[1], nowms + lease, owner)
  keepGrants()
  return {1, redis.call('HGET', KEYS[2], owner) or '0'}
end
local writer = false
for _, m in ipairs(redis.call('HVALS', KEYS[3])) do
  if m == 'w' then
    writer = true
  end
end
local busy
if mode == 'r' then
  busy = writer or (string.sub(ARGV[3], 1, 1) == '1' and redis.call('ZCARD', KEYS[4]) > 0)
else
  busy = redis.call('ZCARD', KEYS[1]) > 0
end
if busy then
  if mode == 'w' and ARGV[3] == '11' then
    redis.call('ZADD', KEYS[4], nowms + lease, owner)
    keep(KEYS[4])
  end
  local earliest = nil
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if first[2] then
    earliest = tonumber(first[2])
  end
  if mode == 'r' and not writer then
    local intent = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
    if intent[2] and (earliest == nil or tonumber(intent[2]) < earliest) then
      earliest = tonumber(intent[2])
    end
  end
  return {0, (earliest or nowms) - nowms}
end
redis.call('ZREM', KEYS[4], owner)
local token = tonumber(redis.call('GET', KEYS[5]) or '0') + 1
if token < nowus then
  token = nowus
end
local t = string.format('%.0f', token)
redis.call('ZADD', KEYS[1], nowms + lease, owner)
redis.call('HSET', KEYS[2], owner, t)
redis.call('HSET', KEYS[3], owner, mode)
redis.call('SET', KEYS[5], t, 'PX', ARGV[5])
redis.call('PUBLISH', ARGV[6], 'acquired:' .. t .. ':' .. owner)
keepGrants()
return {1, t}
