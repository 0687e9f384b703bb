-- One attempt to take a lock, in ONE statement (one implicit transaction), when the client does
-- not know the name's row (or acquire_row.sql found it busy or gone):
--   $1 name (stored form)  $2 owner (stored form)  $3 TTL in microseconds  $4 notification channel
--   $5 the notification payload after the token: "<owner length> <owner><name>" (built by the client)
--   $6 the lock payload to store with a new grant (stored form), or NULL for none
-- Granted: take the row when it is free by the server's clock or already this owner's (as
-- acquire_row.sql, same token order), or insert the row when the name has none.
-- Why it is correct under concurrency:
--  * Exclusion: the UPDATE takes the row lock and re-checks its WHERE on the latest committed
--    version; the INSERT runs only when the statement's snapshot had no row, and of concurrent
--    inserts exactly one succeeds (ON CONFLICT DO NOTHING): the others get nothing back.
--  * Token order of an insert: it first takes a transaction-scoped advisory lock on the name's
--    hash (released at commit, so pools and PgBouncer are fine) and only then draws nextval, and
--    rows are deleted only under the same lock (purge.sql). So a row deleted before the insert
--    was deleted before the draw, and every token it ever had is smaller. (A hash collision of
--    two names only makes them wait for each other for a moment.)
-- Busy: the holder's owner, token, remaining TTL and payload come back in the same round trip (from the
-- statement's snapshot; when the holder committed after it began, none comes back: holder unknown).
-- A grant is announced only while a client observes the name (see acquire_row.sql); a new row has
-- no watcher (${watch_fn} creates the row of a name it watches).
WITH updated AS (
    UPDATE ${table} AS l
    SET owner      = $2,
        token      = CASE WHEN l.owner = $2 THEN l.token ELSE nextval('${sequence}') END,
        expires_at = now() + $3::bigint * interval '1 microsecond',
        payload    = CASE WHEN l.owner = $2 THEN l.payload ELSE $6::text END
    WHERE l.name = $1 AND (l.owner = $2 OR l.expires_at <= now())
    RETURNING l.token,
              CASE WHEN l.watched_until > now() THEN ${notify_fn}($4, '\o' || $1, 'A ' || l.token || ' ' || $5) ELSE false END AS sent
), inserted AS (
    INSERT INTO ${table} (name, owner, token, expires_at, payload)
    SELECT $1, $2, nextval('${sequence}'), now() + $3::bigint * interval '1 microsecond', $6::text
    FROM (SELECT pg_advisory_xact_lock(hashtextextended($1, 7305467431562270022)) OFFSET 0) AS serialized
    WHERE NOT EXISTS (SELECT 1 FROM ${table} x WHERE x.name = $1)
    ON CONFLICT (name) DO NOTHING
    RETURNING token
)
SELECT true AS granted, u.token, NULL::text AS owner, NULL::bigint AS remaining_us, NULL::text AS payload
FROM updated u
UNION ALL
SELECT true, i.token, NULL, NULL, NULL FROM inserted i
UNION ALL
SELECT false, h.token, h.owner,
       GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, h.payload
FROM ${table} h
WHERE h.name = $1 AND h.expires_at > now()
  AND NOT EXISTS (SELECT 1 FROM updated) AND NOT EXISTS (SELECT 1 FROM inserted)
