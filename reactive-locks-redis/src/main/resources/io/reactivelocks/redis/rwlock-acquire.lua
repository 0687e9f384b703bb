-- One attempt for a read or write grant of a read-write lock, atomically.
--
-- KEYS[1]  the grants: sorted set, member = owner id, score = expiry in server ms (readers and the writer)
-- KEYS[2]  the tokens: hash, owner id -> fencing token; while a writer holds, also the field "\0w" = its
--          owner id (a writer holds alone, so this one field says whether the grants are a writer's)
-- KEYS[3]  the waiting writers' intents: sorted set, member = owner id, score = expiry in server ms
-- KEYS[4]  the fence key (integer counter, PX = fence TTL)
-- ARGV[1]  the owner id asking
-- ARGV[2]  'r' or 'w'
-- ARGV[3]  two flags: writer-preferring ('1': intents block readers), then waiting ('1': a refused
--          writer-preferring writer leaves an intent), e.g. '11'
-- ARGV[4]  lease time in ms (of the grant, and of a refused writer's intent)
-- ARGV[5]  fence counter TTL in ms
-- ARGV[6]  the lock's pub/sub channel (releases)
-- ARGV[7]  the channel of its grants ("acquired:<token>:<owner>"), which only observers subscribe to
--
-- Returns {1, token}   granted (also for an owner that holds already: same token, TTL set again)
--         {0, ms}      busy: the time left of the grant (or, for a reader, intent) that ends first
--
-- Expired grants and intents are removed first (and "released:<owner>" published for each). A
-- reader is granted when no writer holds and, writer-preferring, no intent exists; a writer when no
-- one holds. Tokens are max(counter + 1, server TIME in µs), as a lock's: strictly increasing per
-- name across restarts, so a writer's token exceeds its readers' and a reader's the last writer's.
-- Issue 30 (statement economy): the grant of a name no one holds asks nothing about holders it
-- cannot have (an empty grants set has no writer and no grant of this owner), so an uncontended
-- write grant runs 12 commands and its release 3 (23 in all before).
local WRITER = '\0w'
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local nowus = tonumber(time[1]) * 1000000 + tonumber(time[2])
local owner, mode, lease = ARGV[1], ARGV[2], tonumber(ARGV[4])
for _, o in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowms)) do
  redis.call('ZREM', KEYS[1], o)
  if redis.call('HGET', KEYS[2], WRITER) == o then
    redis.call('HDEL', KEYS[2], o, WRITER)
  else
    redis.call('HDEL', KEYS[2], o)
  end
  redis.call('PUBLISH', ARGV[6], 'released:' .. o)
end
for _, o in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', nowms)) do
  redis.call('ZREM', KEYS[3], o)
  redis.call('PUBLISH', ARGV[6], 'released:' .. o)
end
-- both keys live as long as the grant that ends last
local function keepGrants(ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
local function lastExpiry()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return math.max(1, tonumber(last[2]) - nowms)
end
local held = redis.call('ZCARD', KEYS[1])
local writer = false
if held > 0 then
  if redis.call('ZSCORE', KEYS[1], owner) then
    redis.call('ZADD', KEYS[1], nowms + lease, owner)
    keepGrants(lastExpiry())
    return {1, redis.call('HGET', KEYS[2], owner) or '0'}
  end
  if mode == 'r' then
    writer = redis.call('HEXISTS', KEYS[2], WRITER) == 1
  end
end
local busy
if mode == 'r' then
  busy = writer or (string.sub(ARGV[3], 1, 1) == '1' and redis.call('ZCARD', KEYS[3]) > 0)
else
  busy = held > 0
end
if busy then
  if mode == 'w' and ARGV[3] == '11' then
    redis.call('ZADD', KEYS[3], nowms + lease, owner)
    local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    redis.call('PEXPIRE', KEYS[3], math.max(1, tonumber(last[2]) - nowms))
  end
  local earliest = nil
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if first[2] then
    earliest = tonumber(first[2])
  end
  if mode == 'r' and not writer then
    local intent = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    if intent[2] and (earliest == nil or tonumber(intent[2]) < earliest) then
      earliest = tonumber(intent[2])
    end
  end
  return {0, (earliest or nowms) - nowms}
end
if mode == 'w' then
  redis.call('ZREM', KEYS[3], owner)
end
local token = tonumber(redis.call('GET', KEYS[4]) or '0') + 1
if token < nowus then
  token = nowus
end
local t = string.format('%.0f', token)
redis.call('ZADD', KEYS[1], nowms + lease, owner)
if mode == 'w' then
  redis.call('HSET', KEYS[2], owner, t, WRITER, owner)
else
  redis.call('HSET', KEYS[2], owner, t)
end
redis.call('SET', KEYS[4], t, 'PX', ARGV[5])
redis.call('PUBLISH', ARGV[7], 'acquired:' .. t .. ':' .. owner)
if held == 0 then
  keepGrants(lease)
else
  keepGrants(lastExpiry())
end
return {1, t}
