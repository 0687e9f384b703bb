-- Renews one live claim, owner- and token-checked.   ? claim time in µs (twice)  ? queue  ? task id  ? owner  ? token
UPDATE ${task_table}
SET claim_expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ready_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
    updated_at = UTC_TIMESTAMP(6)
WHERE queue = ? AND task_id = ? AND status = 'in_progress' AND claim_owner = ? AND claim_token = ?
  AND claim_expires_at > UTC_TIMESTAMP(6)
