-- Task queue: reads one task.
--
-- KEYS[1]  task records, KEYS[2] claimed tasks (score = expiry in server ms), KEYS[3] payloads
-- ARGV[1]  task id
--
-- Returns {} for an unknown task, else {state, retries, failures, captures, token, remaining ms, payload,
-- owner}: payload "-" (none) or "+" followed by it; owner "" when never captured;
-- state p (capturable: pending, released, or claimed with an expired claim), f (failed, capturable),
-- c (claimed, remaining ms > 0), d (done) or x (dead); remaining is -1 unless claimed.
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  return {}
end
local s, r, f, n, t, o = string.match(rec, '^(%a)|(%d+)|(%d+)|(%d+)|(%d+)|(.*)$')
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
local payload = redis.call('HGET', KEYS[3], ARGV[1])
if payload then
  payload = '+' .. payload
else
  payload = '-'
end
return {s, r, f, n, t, remaining, payload, o}
