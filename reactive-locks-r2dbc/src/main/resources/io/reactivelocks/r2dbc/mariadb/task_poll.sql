-- The poller's read of the queues waited for: per queue, a fingerprint of its capturable tasks and its
-- last change (a task registered, failed or released changes it). ${names} is one '?' per queue.
SELECT queue AS name, CONCAT(SUM(status IN ('pending', 'failed')), '/', MAX(updated_at)) AS owner, 0 AS token, 1 AS live
FROM ${task_table}
WHERE queue IN (${names})
GROUP BY queue
