-- Task queue: extends claims that have not expired yet (each owner and token checked).
--
-- KEYS[1]  task records, KEYS[2] claimed tasks (score = expiry in server ms)
-- ARGV[1]  claim time in ms
-- ARGV[2..] triples: task id, token, owner
--
-- Returns one integer per claim, in order: 1 when renewed to now + claim time; 0 when the claim
-- expired, was recaptured or ended.
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expiry = string.format('%.0f', nowMs + tonumber(ARGV[1]))
local out = {}
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  local ok = 0
  local rec = redis.call('HGET', KEYS[1], id)
  if rec then
    local s, t, o = string.match(rec, '^(%a)|%d+|%d+|%d+|(%d+)|(.*)$')
    if s == 'c' and t == ARGV[i + 1] and o == ARGV[i + 2] then
      local current = tonumber(redis.call('ZSCORE', KEYS[2], id) or '0')
      if current > nowMs then
        redis.call('ZADD', KEYS[2], 'XX', expiry, id)
        ok = 1
      end
    end
  end
  out[#out + 1] = ok
end
return out
