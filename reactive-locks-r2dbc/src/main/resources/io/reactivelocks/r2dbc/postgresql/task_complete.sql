-- Marks a claimed task done: owner AND token checked, so a claim that was recaptured (a new,
-- greater token) can no longer complete. An expired claim nobody recaptured yet still may: no one
-- else can have worked on the task. The row lock orders it against a concurrent capture.
--   $1 queue  $2 task id  $3 owner (stored forms)  $4 token
UPDATE ${task_table} t
SET status = 'done', claim_expires_at = NULL, ready_at = now(), updated_at = now()
WHERE t.queue = $1 AND t.task_id = $2 AND t.status = 'in_progress' AND t.claim_owner = $3 AND t.claim_token = $4
RETURNING t.status
