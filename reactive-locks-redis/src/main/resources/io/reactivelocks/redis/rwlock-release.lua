-- Owner-checked release of a read-write lock grant, or of a waiting writer's intent.
--
-- KEYS[1]  the grants (sorted set: owner -> expiry in server ms)
-- KEYS[2]  the tokens (hash: owner -> token, and "\0w" -> the writer's owner id while a writer holds)
-- KEYS[3]  the waiting writers' intents (sorted set: owner -> expiry in server ms)
-- ARGV[1]  owner id
-- ARGV[2]  the lock's pub/sub channel
--
-- Returns 1 when the owner held a grant or an intent and it was removed (and "released:<owner>"
-- published), else 0. The writer field goes with the writer's grant: while a reader holds, no writer
-- does, so a reader's release finds no such field to remove. A hash or set left empty is gone.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[2], ARGV[1], '\0w')
elseif redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
  return 0
end
redis.call('PUBLISH', ARGV[2], 'released:' .. ARGV[1])
return 1
