-- Forgets a task in any state; a claim on it can then no longer complete, fail or release it.
-- $1 queue  $2 task id (stored forms)
DELETE FROM ${task_table} WHERE queue = $1 AND task_id = $2 RETURNING task_id
