-- Task queue: registers tasks (pending, capturable). A task id already known in any state is left alone.
--
-- KEYS[1]  the queue's task records (hash: task id -> "<state>|<retries>|<failures>|<captures>|<token>|<owner>")
-- KEYS[2]  the queue's pending tasks (sorted set: task id, score = server time in µs when it became pending)
-- KEYS[3]  the queue's payloads (hash: task id -> payload, only for tasks registered with one)
-- ARGV[1]  retries: how many failures are retried before the task is dead
-- ARGV[2]  the queue's pub/sub channel
-- ARGV[3..] pairs: task id, then "-" (no payload) or "+" followed by the payload (both encoded by the
--          client, never parsed here)
--
-- Returns how many tasks were new. Publishes "ready" when any was.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local added = 0
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HSETNX', KEYS[1], id, 'p|' .. ARGV[1] .. '|0|0|0|') == 1 then
    -- registration order is kept within a call (+i µs) and, by the server clock, across calls
    redis.call('ZADD', KEYS[2], string.format('%.0f', now + i), id)
    local payload = ARGV[i + 1]
    if string.sub(payload, 1, 1) == '+' then
      redis.call('HSET', KEYS[3], id, string.sub(payload, 2))
    end
    added = added + 1
  end
end
if added > 0 then
  redis.call('PUBLISH', ARGV[2], 'ready')
end
return added
