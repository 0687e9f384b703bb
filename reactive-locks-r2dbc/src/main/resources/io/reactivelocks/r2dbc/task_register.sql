-- Registers tasks as pending, in ONE statement; ids the queue already has (in any state) are left
-- exactly as they are (ON CONFLICT DO NOTHING: a registration never resets a task).
--   $1 queue (stored form)  $2 task ids text[] (stored form)  $3 payloads text[] (stored form or NULL)
--   $4 retries  $5 notification channel  $6 notification payload (the queue's wake-up, built by the client)
-- Waiting capturers of the queue are woken by pg_notify, delivered when this statement commits.
WITH added AS (
    INSERT INTO ${task_table} AS t (queue, task_id, status, retries_left, payload, ready_at, created_at, updated_at)
    SELECT $1, r.task_id, 'pending', $4::integer, r.payload, now(), now(), now()
    FROM unnest($2::text[], $3::text[]) AS r(task_id, payload)
    ON CONFLICT (queue, task_id) DO NOTHING
    RETURNING t.task_id
), notified AS MATERIALIZED (
    SELECT pg_notify($5, $6) AS sent WHERE EXISTS (SELECT 1 FROM added)
)
SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM notified) AS notified
