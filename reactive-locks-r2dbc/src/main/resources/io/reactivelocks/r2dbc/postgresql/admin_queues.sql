-- The task queues with live claims whose name starts with $1 (stored form, compared literally:
-- left(...) = $1, never LIKE), for the admin's listing.
SELECT DISTINCT queue AS name
FROM ${task_table}
WHERE left(queue, length($1)) = $1 AND status = 'in_progress' AND claim_expires_at > now()
