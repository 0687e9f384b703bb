-- Task queue: captures up to ARGV[2] tasks atomically, each as a claim with a fencing token and an expiry.
--
-- KEYS[1]  task records (hash: task id -> "<state>|<retries>|<failures>|<captures>|<token>|<owner>";
--          state p = pending, f = failed (capturable), c = claimed, d = done, x = dead)
-- KEYS[2]  pending tasks (sorted set, score = server time in µs when it became pending)
-- KEYS[3]  claimed tasks (sorted set, score = claim expiry in server ms)
-- KEYS[4]  the queue's fencing counter
-- KEYS[5]  payloads (hash: task id -> payload)
-- ARGV[1]  owner id of the capturer
-- ARGV[2]  limit: the most tasks to capture (the subscriber's demand), at least 1
-- ARGV[3]  claim time in ms
-- ARGV[4]  fence counter TTL in ms
--
-- Invariant kept by every task script: state c <=> member of KEYS[3]; state p or f <=> member of KEYS[2];
-- d and x are in neither. There is no sweeper: a claim whose expiry passed (score <= now) is taken
-- here again, first, before pending tasks in their order.
--
-- Returns {claim ms, hint ms, id1, token1, retries1, captures1, payload1, id2, ...}: payload is "-"
-- when the task has none, else "+" followed by it; hint is the time until the
-- earliest remaining claim expires (-1 when none), for a capturer that found less than it asked for.
-- Tokens are max(counter + 1, server TIME in µs): strictly increasing per queue, also across a
-- restart that lost the counter.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local nowMs = math.floor(now / 1000)
local limit = tonumber(ARGV[2])
local expiry = string.format('%.0f', nowMs + tonumber(ARGV[3]))

local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', string.format('%.0f', nowMs), 'LIMIT', 0, limit)
if #ids < limit then
  local pending = redis.call('ZRANGE', KEYS[2], 0, limit - #ids - 1)
  for i = 1, #pending do
    ids[#ids + 1] = pending[i]
  end
end

local counter = tonumber(redis.call('GET', KEYS[4]) or '0')
local out = {ARGV[3], -1}
local captured = 0
for i = 1, #ids do
  local id = ids[i]
  local rec = redis.call('HGET', KEYS[1], id)
  local s, r, f, n
  if rec then
    s, r, f, n = string.match(rec, '^(%a)|(%d+)|(%d+)|(%d+)|')
  end
  if s == 'p' or s == 'f' or s == 'c' then
    local token = counter + 1
    if token < now then
      token = now
    end
    counter = token
    token = string.format('%.0f', token)
    n = string.format('%.0f', tonumber(n) + 1)
    redis.call('HSET', KEYS[1], id, 'c|' .. r .. '|' .. f .. '|' .. n .. '|' .. token .. '|' .. ARGV[1])
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZADD', KEYS[3], expiry, id)
    out[#out + 1] = id
    out[#out + 1] = token
    out[#out + 1] = r
    out[#out + 1] = n
    local payload = redis.call('HGET', KEYS[5], id)
    if payload then
      out[#out + 1] = '+' .. payload
    else
      out[#out + 1] = '-'
    end
    captured = captured + 1
  else
    -- a stray member (record removed or not capturable): repair the invariant
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZREM', KEYS[3], id)
  end
end
if captured > 0 then
  redis.call('SET', KEYS[4], string.format('%.0f', counter), 'PX', ARGV[4])
end
if captured < limit then
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  if first[2] then
    local hint = tonumber(first[2]) - nowMs
    if hint < 0 then
      hint = 0
    end
    out[2] = hint
  end
end
return out
