-- Registers tasks as pending, in ONE statement; ids the queue already has (in any state) are left
-- exactly as they are (ON CONFLICT DO NOTHING: a registration never resets a task).
--   $1 queue (stored form)  $2 task ids text[] (stored form)  $3 payloads text[] (stored form or NULL)
--   $4 retries  $5 notification channel  $6 notification payload (the queue's wake-up, built by the client)
-- Waiting capturers of the queue are woken by pg_notify, delivered when this statement commits.
-- ready_at is now() plus the id's place in $2 in microseconds: the tasks of one call are captured in the
-- order given (with one now() for all, the capture's ORDER BY ready_at had ties, broken by heap order).
WITH added AS (
    INSERT INTO ${task_table} AS t (queue, task_id, status, retries_left, payload, ready_at, created_at, updated_at)
    SELECT $1, r.task_id, 'pending', $4::integer, r.payload, now() + (r.ord - 1) * interval '1 microsecond', now(), now()
    FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS r(task_id, payload, ord)
    ON CONFLICT (queue, task_id) DO NOTHING
    RETURNING t.task_id
), notified AS MATERIALIZED (
    SELECT pg_notify($5, $6) AS sent WHERE EXISTS (SELECT 1 FROM added)
)
SELECT (SELECT count(*) FROM added) AS added, (SELECT count(*) FROM notified) AS notified
