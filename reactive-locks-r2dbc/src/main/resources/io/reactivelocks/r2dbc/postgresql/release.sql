-- Owner-checked release (compare-and-delete): only the row of this owner goes.
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel
--   $4 the notification payload after the token: "<owner length> <owner><name>"
-- Announced as 'R' (released) or 'E' (it had already expired) when a row was deleted and a client
-- watches the name (${notify_fn}).
WITH released AS (
    DELETE FROM ${table}
    WHERE name = $1 AND owner = $2
    RETURNING token, expires_at <= now() AS expired
), notified AS MATERIALIZED (
    SELECT r.token, ${notify_fn}($3, $1, CASE WHEN r.expired THEN 'E ' ELSE 'R ' END || r.token || ' ' || $4) AS sent
    FROM released r
)
SELECT n.token FROM notified n
