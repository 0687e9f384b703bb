-- Fails a claimed task: a retry used (failed, capturable again) or none left (dead). The status is
-- assigned before retries_left, so it reads the count before the failure.
--   ? queue  ? task id  ? owner  ? token
UPDATE ${task_table}
SET status = IF(retries_left > 0, 'failed', 'dead'), retries_left = GREATEST(retries_left - 1, 0),
    claim_expires_at = NULL, ready_at = UTC_TIMESTAMP(6), updated_at = UTC_TIMESTAMP(6)
WHERE queue = ? AND task_id = ? AND status = 'in_progress' AND claim_owner = ? AND claim_token = ?
