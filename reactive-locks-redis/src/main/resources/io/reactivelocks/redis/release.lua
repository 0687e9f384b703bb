-- Owner-checked release (compare-and-delete).
--
-- KEYS[1]  the lock key ("<token>:<owner>", or "<token>:<owner>\n<payload>")
-- ARGV[1]  owner id
-- ARGV[2]  the lock's pub/sub channel
--
-- Returns 1 when the owner held the lock and it was deleted (and "released:<owner>" published),
--         0 when the key is gone or belongs to another owner (nothing changed).
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local sep = string.find(current, ':', 1, true)
local owner = current
if sep then
  owner = string.sub(current, sep + 1)
  local nl = string.find(owner, '\n', 1, true)
  if nl then
    owner = string.sub(owner, 1, nl - 1)
  end
end
if owner ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], 'released:' .. ARGV[1])
return 1
