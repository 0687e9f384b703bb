-- Gives claimed tasks back: pending again at once, no retry used, capturers woken. Owner checked;
-- used for one claim (its id and token), and for the claims of one capture statement that were
-- never delivered (all ids of that statement's owner: $4 and $5 NULL).
--   $1 queue  $2 owner (stored forms)  $3 channel  $4 task ids text[] or NULL  $5 tokens bigint[] or NULL
--   $6 the queue's wake-up payload
WITH released AS (
    UPDATE ${task_table} t
    SET status = 'pending', claim_expires_at = NULL, ready_at = now(), updated_at = now()
    WHERE t.queue = $1 AND t.status = 'in_progress' AND t.claim_owner = $2
      AND ($4::text[] IS NULL OR (t.task_id, t.claim_token) IN (SELECT * FROM unnest($4::text[], $5::bigint[])))
    RETURNING t.task_id
), notified AS MATERIALIZED (
    SELECT pg_notify($3, $6) AS sent WHERE EXISTS (SELECT 1 FROM released)
)
SELECT (SELECT count(*) FROM released) AS released, (SELECT count(*) FROM notified) AS notified
