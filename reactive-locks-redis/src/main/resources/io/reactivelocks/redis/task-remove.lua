-- Task queue: forgets a task in any state (a claim on it can then no longer complete, fail or release).
--
-- KEYS[1]  task records, KEYS[2] pending tasks, KEYS[3] claimed tasks, KEYS[4] payloads
-- ARGV[1]  task id
--
-- Returns 1 when the task existed, 0 otherwise.
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
