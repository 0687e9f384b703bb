-- Window lock: at most one claim per name and period, first writer wins (ZADD GT CH).
--
-- KEYS[1]  the window key (sorted set: member = period in ms, score = last claimed window)
-- KEYS[2]  the window fencing counter (integer)
-- ARGV[1]  the period in ms
-- ARGV[2]  the fencing counter's TTL in ms
--
-- Returns {1, window, remaining, token} when this call is the first claim of the current window
-- (window = floor(server time in ms / period)), {0} when that window (or, after a clock step back,
-- a later one) was claimed already. remaining is the time left in the window, in ms, by the
-- server's clock. The token is max(counter + 1, server TIME in µs), as for locks: strictly
-- increasing per name, also after a restart that lost the counter. The window key expires when
-- the longest period's window ends, so nothing grows forever.
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(nowUs / 1000)
local period = tonumber(ARGV[1])
local window = math.floor(now / period)
-- numbers are formatted explicitly: Lua's default number-to-string keeps only 14 digits
local claimed = redis.call('ZADD', KEYS[1], 'GT', 'CH', string.format('%.0f', window), ARGV[1])
if claimed == 0 then
  return {0}
end
local remaining = (window + 1) * period - now
if redis.call('PTTL', KEYS[1]) < remaining then
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', remaining))
end
local token = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if token < nowUs then
  token = nowUs
end
token = string.format('%.0f', token)
redis.call('SET', KEYS[2], token, 'PX', ARGV[2])
return {1, string.format('%.0f', window), remaining, token}
