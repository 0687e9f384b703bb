-- Step 2, per picked task: the claim.   ? owner  ? token  ? claim time in µs  ? claim time in µs  ? queue  ? task id
UPDATE ${task_table}
SET status = 'in_progress', claim_owner = ?, claim_token = ?,
    claim_expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ready_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
    attempts = attempts + 1, updated_at = UTC_TIMESTAMP(6)
WHERE queue = ? AND task_id = ?
