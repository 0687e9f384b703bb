-- Owner-checked release of one permit (or of a read-write lock grant or intent, on its table),
-- announced on the channel when a row was deleted.
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel  $4 the payload
WITH released AS (
    DELETE FROM ${permit_table} WHERE name = $1 AND owner = $2 RETURNING token
), notified AS MATERIALIZED (
    SELECT r.token, pg_notify($3, $4) AS sent FROM released r
)
SELECT n.token FROM notified n
