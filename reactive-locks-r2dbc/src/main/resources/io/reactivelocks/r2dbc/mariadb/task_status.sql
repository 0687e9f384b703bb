-- A task's state.   ? queue  ? task id
SELECT status, retries_left, attempts, claim_owner, claim_token, payload,
       TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), claim_expires_at) AS remaining_us
FROM ${task_table}
WHERE queue = ? AND task_id = ?
