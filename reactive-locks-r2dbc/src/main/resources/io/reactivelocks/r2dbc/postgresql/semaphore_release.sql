-- Owner-checked release of one permit (or of a read-write lock grant or intent, on its table),
-- announced on the channel when the deleted row says a client watches the name (its watched_until,
-- kept under the row lock by ${watch_fn} and set by the grant; see semaphore_schema.sql), as a lock's
-- release reads its row: no call of ${notify_fn} (issue 30).
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel  $4 the payload
DELETE FROM ${permit_table} AS p WHERE p.name = $1 AND p.owner = $2
RETURNING p.token, CASE WHEN p.watched_until > now() THEN pg_notify($3, $4) IS NULL ELSE false END AS sent
