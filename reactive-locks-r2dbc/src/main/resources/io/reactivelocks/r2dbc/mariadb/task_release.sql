-- Gives a claimed task back, its retries kept.   ? queue  ? task id  ? owner  ? token
UPDATE ${task_table}
SET status = 'pending', claim_expires_at = NULL, ready_at = UTC_TIMESTAMP(6), updated_at = UTC_TIMESTAMP(6)
WHERE queue = ? AND task_id = ? AND status = 'in_progress' AND claim_owner = ? AND claim_token = ?
