-- Owner-checked release of one permit.
--
-- KEYS[1]  the holders (sorted set: owner -> expiry in server ms)
-- KEYS[2]  the tokens (hash: owner -> token)
-- ARGV[1]  owner id
-- ARGV[2]  the semaphore's pub/sub channel
--
-- Returns 1 when the owner's entry was removed (and "released:<owner>" published), else 0; an
-- expired entry that no grant has dropped yet is removed too. The holders and tokens are written
-- and removed together, so the last release empties (and so deletes) both keys.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], 'released:' .. ARGV[1])
return 1
