-- Task queue: ends a claim (owner and token checked): complete, fail or release.
--
-- KEYS[1]  task records, KEYS[2] pending tasks, KEYS[3] claimed tasks
-- ARGV[1]  task id, ARGV[2] token, ARGV[3] owner
-- ARGV[4]  'complete' -> done;
--          'fail'     -> failed (capturable again, state f) with one retry less (failures + 1), or dead
--                        when no retry was left;
--          'release'  -> pending again, retries unchanged
-- ARGV[5]  the queue's pub/sub channel ("ready" is published when the task is capturable again)
--
-- Succeeds while the task's record still carries this claim (state c, same token and owner), also
-- after the claim's expiry as long as no capturer took the task again: nobody else can have worked
-- on it. Returns 0 when the claim is not held any more, 1 when done, pending or released, 2 when dead.
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  return 0
end
local s, r, f, n, t, o = string.match(rec, '^(%a)|(%d+)|(%d+)|(%d+)|(%d+)|(.*)$')
if s ~= 'c' or t ~= ARGV[2] or o ~= ARGV[3] then
  return 0
end
redis.call('ZREM', KEYS[3], ARGV[1])
local tail = '|' .. n .. '|' .. t .. '|' .. o
if ARGV[4] == 'complete' then
  redis.call('HSET', KEYS[1], ARGV[1], 'd|' .. r .. '|' .. f .. tail)
  return 1
end
if ARGV[4] == 'fail' then
  f = string.format('%.0f', tonumber(f) + 1)
  if tonumber(r) == 0 then
    redis.call('HSET', KEYS[1], ARGV[1], 'x|0|' .. f .. tail)
    return 2
  end
  r = string.format('%.0f', tonumber(r) - 1)
end
local state = 'p'
if ARGV[4] == 'fail' then
  state = 'f'
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call('HSET', KEYS[1], ARGV[1], state .. '|' .. r .. '|' .. f .. tail)
redis.call('ZADD', KEYS[2], string.format('%.0f', now), ARGV[1])
redis.call('PUBLISH', ARGV[5], 'ready')
return 1
