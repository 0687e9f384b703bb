-- Records a failure of a claimed task (owner AND token checked, like task_complete.sql): with a
-- retry left it becomes 'failed' (capturable again) with one retry less; with none it is 'dead',
-- kept visible and never captured again. Capturers are woken when it is capturable again.
--   $1 queue  $2 task id  $3 owner (stored forms)  $4 token  $5 channel  $6 the queue's wake-up payload
WITH failed AS (
    UPDATE ${task_table} t
    SET status           = CASE WHEN t.retries_left > 0 THEN 'failed' ELSE 'dead' END,
        retries_left     = GREATEST(t.retries_left - 1, 0),
        claim_expires_at = NULL,
        ready_at         = now(),
        updated_at       = now()
    WHERE t.queue = $1 AND t.task_id = $2 AND t.status = 'in_progress' AND t.claim_owner = $3 AND t.claim_token = $4
    RETURNING t.status, t.retries_left
), notified AS MATERIALIZED (
    SELECT pg_notify($5, $6) AS sent FROM failed f WHERE f.status = 'failed'
)
SELECT f.status, f.retries_left, (SELECT count(*) FROM notified) AS notified FROM failed f
