-- When the next claim of a queue expires (a capture that got fewer tasks than it asked for waits at
-- most that long).   ? queue
SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MIN(ready_at)) AS next_us
FROM ${task_table}
WHERE queue = ? AND status = 'in_progress' AND ready_at > UTC_TIMESTAMP(6)
