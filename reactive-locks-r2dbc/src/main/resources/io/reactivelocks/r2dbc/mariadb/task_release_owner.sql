-- Gives back every task an owner holds in a queue.   ? queue  ? owner
UPDATE ${task_table}
SET status = 'pending', claim_expires_at = NULL, ready_at = UTC_TIMESTAMP(6), updated_at = UTC_TIMESTAMP(6)
WHERE queue = ? AND status = 'in_progress' AND claim_owner = ?
