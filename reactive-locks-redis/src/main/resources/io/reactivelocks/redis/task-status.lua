-- Task queue: reads one task.
--
-- KEYS[1]  task records, KEYS[2] claimed tasks (score = expiry in server ms)
-- ARGV[1]  task id
--
-- Returns {} for an unknown task, else {state, retries, failures, captures, token, remaining ms}:
-- state p (capturable: pending, failed with retries left, or claimed with an expired claim),
-- c (claimed, remaining ms > 0), d (done) or x (dead); remaining is -1 unless claimed.
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  return {}
end
local s, r, f, n, t = string.match(rec, '^(%a)|(%d+)|(%d+)|(%d+)|(%d+)|')
local remaining = -1
if s == 'c' then
  local time = redis.call('TIME')
  local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  remaining = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0') - nowMs
  if remaining <= 0 then
    s = 'p'
    remaining = -1
  end
end
return {s, r, f, n, t, remaining}
