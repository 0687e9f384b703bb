-- Owner-checked release: only the row of this owner is freed. The row stays (owner '', the
-- payload cleared) so that the name's next grant is one UPDATE of it (acquire_row.sql); purge.sql
-- deletes free rows later.
--   $1 name (stored form)  $2 owner (stored form)  $3 notification channel
--   $4 the notification payload after the token: "<owner length> <owner><name>"
-- A lease released before its end gets expires_at '-infinity'; one that had already expired keeps
-- its end, so the answer can tell them apart. Announced as 'R' (released) or 'E' (it had already
-- expired) only while a client watches the name (watched_until, see acquire_row.sql).
UPDATE ${table} AS l
SET owner      = '',
    payload    = NULL,
    expires_at = CASE WHEN l.expires_at <= now() THEN l.expires_at ELSE '-infinity'::timestamptz END
WHERE l.name = $1 AND l.owner = $2
RETURNING l.token,
          CASE WHEN l.watched_until > now()
               THEN pg_notify($3, CASE WHEN l.expires_at = '-infinity' THEN 'R ' ELSE 'E ' END || l.token || ' ' || $4) IS NULL
               ELSE false END AS sent
