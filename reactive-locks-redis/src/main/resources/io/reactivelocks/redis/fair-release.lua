-- Owner-checked release of a fair lock: deletes the owner's hold (compare-and-delete, as
-- release.lua) and its queue entry, if any.
--
-- KEYS[1]  the lock key ("<token>:<owner>", or "<token>:<owner>\n<payload>")
-- KEYS[2]  the queue      (sorted set: owner -> arrival)
-- KEYS[3]  the deadlines  (sorted set: owner -> expiry in server ms)
-- ARGV[1]  owner id
-- ARGV[2]  the lock's pub/sub channel
--
-- Returns 1 when the owner held the lock or waited in the queue and that was deleted (and
--         "released:<owner>" published, so that the next waiter asks at once), 0 when nothing was.
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  local owner = current
  if sep then
    owner = string.sub(current, sep + 1)
    local nl = string.find(owner, '\n', 1, true)
    if nl then
      owner = string.sub(owner, 1, nl - 1)
    end
  end
  if owner == ARGV[1] then
    -- the holder: never in the queue (its grant dequeued it), so nothing to remove there
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], 'released:' .. ARGV[1])
    return 1
  end
end
local removed = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if removed == 0 then
  return 0
end
redis.call('PUBLISH', ARGV[2], 'released:' .. ARGV[1])
return 1
