-- Grants a fair (FIFO) lock: the mutex's lock and fence keys plus a queue of waiters, atomically.
--
-- KEYS[1]  the lock key   (as acquire.lua: "<token>:<owner>[\n<payload>]", PX = lease)
-- KEYS[2]  the fence key  (integer counter, PX = fence TTL)
-- KEYS[3]  the queue      (sorted set: owner -> arrival, server TIME in µs, strictly increasing)
-- KEYS[4]  the deadlines  (sorted set: owner -> the waiter's expiry in server ms)
-- ARGV[1]  owner id
-- ARGV[2]  lease time in ms
-- ARGV[3]  fence counter TTL in ms
-- ARGV[4]  the lock's pub/sub channel
-- ARGV[5]  '1' when the grant carries a payload, '0' when not
-- ARGV[6]  the payload (ignored unless ARGV[5] is '1')
-- ARGV[7]  '1' when the caller waits (joins or stays in the queue), '0' for a try (never queued)
-- ARGV[8]  the waiter's deadline in ms (how long its entry lives without another call)
--
-- Returns {1, token}                               granted (also when this owner already holds it)
--         {0, token, pttl, owner, has, payload}    busy (a try): the holder as acquire.lua answers it,
--                                                  or token '0', pttl -2, owner '' when the lock is free
--                                                  but waiters are queued (a try never barges past them)
--         {2, hint, ahead}                         queued (a wait): the owner is in the queue; hint is the
--                                                  ms until something may change without a notification
--                                                  (the holder's TTL, or the head waiter's deadline), -1 if none;
--                                                  ahead is the number of waiters before it (its rank)
--
-- Expired waiters are dropped before the queue is read (not when it is empty); the head of the queue is
-- granted when the lock key is free. A holder is never in the queue: a grant dequeues its owner.
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local nowMs = math.floor(nowUs / 1000)
-- drops the waiters whose deadline passed: run before the queue's order is read, but only when there is a
-- queue (a name no one waits for needs no sweep: the uncontended grant runs 7 commands, 10 before)
local function sweep()
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowMs)) do
    redis.call('ZREM', KEYS[4], w)
    redis.call('ZREM', KEYS[3], w)
  end
end
local waits = ARGV[7] == '1'
local ttl = tonumber(ARGV[8])

local function enqueue()
  if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
    local seq = nowUs
    local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    if #last > 0 and tonumber(last[2]) >= seq then
      seq = tonumber(last[2]) + 1
    end
    redis.call('ZADD', KEYS[3], string.format('%.0f', seq), ARGV[1])
  end
  redis.call('ZADD', KEYS[4], string.format('%.0f', nowMs + ttl), ARGV[1])
  for i = 3, 4 do
    if redis.call('PTTL', KEYS[i]) < ttl then
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
  end
end

local function dequeue()
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
end

local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  local token, owner, has, payload = '0', current, 0, ''
  if sep then
    token = string.sub(current, 1, sep - 1)
    owner = string.sub(current, sep + 1)
    local nl = string.find(owner, '\n', 1, true)
    if nl then
      has, payload = 1, string.sub(owner, nl + 1)
      owner = string.sub(owner, 1, nl - 1)
    end
  end
  if owner == ARGV[1] then
    dequeue()
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, token}
  end
  local pttl = redis.call('PTTL', KEYS[1])
  if not waits then
    return {0, token, pttl, owner, has, payload}
  end
  sweep()
  enqueue()
  return {2, pttl, redis.call('ZRANK', KEYS[3], ARGV[1])}
end

local head = redis.call('ZRANGE', KEYS[3], 0, 0)
if #head > 0 then
  sweep()
  head = redis.call('ZRANGE', KEYS[3], 0, 0)
end
if #head > 0 and head[1] ~= ARGV[1] then
  if not waits then
    return {0, '0', -2, '', 0, ''}
  end
  enqueue()
  local deadline = redis.call('ZSCORE', KEYS[4], head[1])
  local hint = -1
  if deadline then
    hint = math.max(0, tonumber(deadline) - nowMs)
  end
  return {2, hint, redis.call('ZRANK', KEYS[3], ARGV[1])}
end

if #head > 0 then
  dequeue() -- the head, this owner (an empty queue holds no entry of it: enqueue writes both sets, sweeps and
            -- dequeues remove from both)
end
local token = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if token < nowUs then
  token = nowUs
end
token = string.format('%.0f', token)
redis.call('SET', KEYS[2], token, 'PX', ARGV[3])
local value = token .. ':' .. ARGV[1]
if ARGV[5] == '1' then
  value = value .. '\n' .. ARGV[6]
end
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[4], 'acquired:' .. token .. ':' .. ARGV[1])
return {1, token}
