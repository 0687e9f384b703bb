-- Task queue: extends a claim that has not expired yet (owner and token checked).
--
-- KEYS[1]  task records, KEYS[2] claimed tasks (score = expiry in server ms)
-- ARGV[1]  task id, ARGV[2] token, ARGV[3] owner, ARGV[4] claim time in ms
--
-- Returns 1 when renewed to now + claim time; 0 when the claim expired, was recaptured or ended.
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  return 0
end
local s, t, o = string.match(rec, '^(%a)|%d+|%d+|%d+|(%d+)|(.*)$')
if s ~= 'c' or t ~= ARGV[2] or o ~= ARGV[3] then
  return 0
end
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expiry = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0')
if expiry <= nowMs then
  return 0
end
redis.call('ZADD', KEYS[2], 'XX', string.format('%.0f', nowMs + tonumber(ARGV[4])), ARGV[1])
return 1
