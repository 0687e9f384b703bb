-- The queues with live claims that start with a prefix, compared byte for byte (never LIKE).
--   ? the prefix's length in bytes  ? the prefix (stored form)
SELECT DISTINCT queue AS name
FROM ${task_table}
WHERE LEFT(queue, ?) = ? AND status = 'in_progress' AND claim_expires_at > UTC_TIMESTAMP(6)
