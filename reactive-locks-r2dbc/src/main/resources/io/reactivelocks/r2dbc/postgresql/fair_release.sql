-- Owner-checked release of a fair lock: the owner's lock row and its place in line, if any.
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel
--   $4 the notification payload after the token: "<owner length> <owner><name>"
-- Announced as 'R'/'E' with the token when the lock row went, as 'R 0' when only the waiter row
-- went (so that the next waiter asks at once); only when a client watches the name (${notify_fn}).
-- One row per deleted row.
WITH waiter AS (
    DELETE FROM ${waiter_table} WHERE name = $1 AND owner = $2 RETURNING 1 AS one
), released AS (
    DELETE FROM ${table}
    WHERE name = $1 AND owner = $2
    RETURNING token, expires_at <= now() AS expired
), notified AS MATERIALIZED (
    SELECT ${notify_fn}($3, $1, CASE WHEN r.expired THEN 'E ' ELSE 'R ' END || r.token || ' ' || $4) AS sent FROM released r
    UNION ALL
    SELECT ${notify_fn}($3, $1, 'R 0 ' || $4) FROM waiter w WHERE NOT EXISTS (SELECT 1 FROM released)
)
SELECT 1 AS deleted FROM notified
