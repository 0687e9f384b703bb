-- Window lock: at most one claim per name and period, first writer wins (ZADD GT CH).
--
-- KEYS[1]  the window key (sorted set: member = period in ms, score = last claimed window)
-- ARGV[1]  the period in ms
--
-- Returns {claimed, window, remaining}: claimed is 1 when this call is the first claim of the
-- current window (window = floor(server time in ms / period)), 0 when it was claimed already;
-- remaining is the time left in the window, in ms, by the server's clock. The key expires when
-- the longest period's window ends, so nothing grows forever.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local period = tonumber(ARGV[1])
local window = math.floor(now / period)
-- numbers are formatted explicitly: Lua's default number-to-string keeps only 14 digits
local claimed = redis.call('ZADD', KEYS[1], 'GT', 'CH', string.format('%.0f', window), ARGV[1])
local remaining = (window + 1) * period - now
if redis.call('PTTL', KEYS[1]) < remaining then
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', remaining))
end
return {claimed, string.format('%.0f', window), remaining}
