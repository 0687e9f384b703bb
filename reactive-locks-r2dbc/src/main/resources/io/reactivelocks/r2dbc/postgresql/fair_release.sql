-- Owner-checked release of a fair lock: the owner's lock row is freed (it stays, as release.sql
-- leaves it) and its place in line, if any, deleted.
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel
--   $4 the notification payload after the token: "<owner length> <owner><name>"
-- Announced as 'R'/'E' with the token when the lock row went, as 'R 0' when only the waiter row
-- went (so that the next waiter asks at once); only when a client watches the name: for the lock
-- row, as release.sql does, by the row's own watched_until (read under its row lock, which a watch
-- takes after the name's advisory lock: asking for that lock here, after the row's, deadlocked with a
-- watch or unwatch of the name), for the waiter row alone by ${notify_fn}. One row per freed or
-- deleted row.
WITH waiter AS (
    DELETE FROM ${waiter_table} WHERE name = $1 AND owner = $2 RETURNING 1 AS one
), released AS (
    UPDATE ${table} AS l
    SET owner = '', payload = NULL,
        expires_at = CASE WHEN l.expires_at <= now() THEN l.expires_at ELSE '-infinity'::timestamptz END
    WHERE l.name = $1 AND l.owner = $2
    RETURNING l.token, l.expires_at <> '-infinity' AS expired, l.watched_until > now() AS watched
), notified AS MATERIALIZED (
    SELECT CASE WHEN r.watched
                THEN pg_notify($3, CASE WHEN r.expired THEN 'E ' ELSE 'R ' END || r.token || ' ' || $4) IS NULL
                ELSE false END AS sent
    FROM released r
    UNION ALL
    SELECT ${notify_fn}($3, $1, 'R 0 ' || $4) FROM waiter w WHERE NOT EXISTS (SELECT 1 FROM released)
)
SELECT 1 AS deleted FROM notified
