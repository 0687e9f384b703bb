-- The live claims of a queue.   ? queue
SELECT task_id, claim_owner, claim_token, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), claim_expires_at) AS remaining_us
FROM ${task_table}
WHERE queue = ? AND status = 'in_progress' AND claim_expires_at > UTC_TIMESTAMP(6)
