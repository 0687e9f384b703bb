-- Lists the unexpired grants and intents of a read-write lock (read only).
--
-- KEYS[1]  the grants (sorted set: owner -> expiry in server ms)
-- KEYS[2]  the tokens (hash: owner -> token, and "\0w" -> the writer's owner id while a writer holds)
-- KEYS[3]  the waiting writers' intents (sorted set: owner -> expiry in server ms)
--
-- Returns {{owner, token, mode, remaining ms, ...}, {owner, remaining ms, ...}}.
local time = redis.call('TIME')
local nowms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local writer = redis.call('HGET', KEYS[2], '\0w')
local grants = {}
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. nowms, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  grants[#grants + 1] = live[i]
  grants[#grants + 1] = redis.call('HGET', KEYS[2], live[i]) or '0'
  grants[#grants + 1] = (live[i] == writer) and 'w' or 'r'
  grants[#grants + 1] = tonumber(live[i + 1]) - nowms
end
local intents = {}
local waiting = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. nowms, '+inf', 'WITHSCORES')
for i = 1, #waiting, 2 do
  intents[#intents + 1] = waiting[i]
  intents[#intents + 1] = tonumber(waiting[i + 1]) - nowms
end
return {grants, intents}
