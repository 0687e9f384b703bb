-- How many live waiters a fair lock's queue holds, for the admin's listing (read-only).
--
-- KEYS[1]  the deadlines (sorted set: owner -> the waiter's expiry in server ms)
--
-- Returns the number of waiters whose deadline is after the server's TIME, or -1 when there is
-- none (no fair lock waits on the name: the queue key is gone once it empties).
local time = redis.call('TIME')
local nowMs = math.floor((tonumber(time[1]) * 1000000 + tonumber(time[2])) / 1000)
local live = redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', nowMs), '+inf')
if live == 0 then
  return -1
end
return live
