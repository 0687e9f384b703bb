-- One attempt to take a lock, in ONE statement (one implicit transaction):
--   $1 name (stored form)  $2 owner (stored form)  $3 TTL in microseconds  $4 notification channel
--   $5 the notification payload after the token: "<owner length> <owner><name>" (built by the client)
--   $6 the lock payload to store with a new grant (stored form), or NULL for none
-- Granted: insert a new row, or take over the existing row when its lease has expired by the
-- server's clock, or grant again to the same owner (a retried request) with the same token.
-- Why it is correct under concurrency:
--  * Exclusion: ON CONFLICT DO UPDATE locks the conflicting row and re-checks the WHERE on its
--    latest committed version, so of concurrent attempts exactly one inserts or takes over; the
--    others update nothing and get no row back.
--  * Token order: every grant of a name first takes a transaction-scoped advisory lock on the
--    name's hash (released at commit, so pools and PgBouncer are fine) and only then draws
--    nextval. Grants of one name are therefore serialized from the draw to the commit, and a
--    later grant always draws a greater token — even when a fresh INSERT races a complete
--    grant-and-release (DELETE) of another client, which the row lock alone could not order.
--    (A hash collision of two names only makes them wait for each other for a moment.)
-- Busy: the holder's owner, token, remaining TTL and payload come back in the same round trip (from the
-- statement's snapshot; when the holder committed after it began, none comes back: holder unknown).
-- The grant is announced with pg_notify, delivered to listeners when this statement commits, but only
-- when a client watches the name (${notify_fn}, watchers_schema.sql): none on the uncontended path.
WITH granted AS (
    INSERT INTO ${table} AS l (name, owner, token, expires_at, payload)
    SELECT $1, $2, nextval('${sequence}'), now() + $3::bigint * interval '1 microsecond', $6::text
    FROM (SELECT pg_advisory_xact_lock(hashtextextended($1, 7305467431562270022)) OFFSET 0) AS serialized
    ON CONFLICT (name) DO UPDATE
        SET owner      = excluded.owner,
            token      = CASE WHEN l.owner = excluded.owner THEN l.token ELSE excluded.token END,
            expires_at = excluded.expires_at,
            payload    = CASE WHEN l.owner = excluded.owner THEN l.payload ELSE excluded.payload END
        WHERE l.owner = excluded.owner OR l.expires_at <= now()
    RETURNING l.token
), notified AS MATERIALIZED (
    SELECT g.token, ${notify_fn}($4, $1, 'A ' || g.token || ' ' || $5) AS sent FROM granted g
)
SELECT true AS granted, n.token, NULL::text AS owner, NULL::bigint AS remaining_us, NULL::text AS payload
FROM notified n
UNION ALL
SELECT false, h.token, h.owner,
       GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, h.payload
FROM ${table} h
WHERE h.name = $1 AND NOT EXISTS (SELECT 1 FROM granted)
