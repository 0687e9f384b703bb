-- Owner-checked release of one permit (or of a read-write lock grant or intent, on its table),
-- announced on the channel when a row was deleted.
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel  $4 the payload
--   $5 the listener key (sent only when a client watches it, ${notify_fn})
WITH released AS (
    DELETE FROM ${permit_table} WHERE name = $1 AND owner = $2 RETURNING token
), notified AS MATERIALIZED (
    SELECT r.token, ${notify_fn}($3, $5, $4) AS sent FROM released r
)
SELECT n.token FROM notified n
