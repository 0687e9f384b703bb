-- Deletes free rows: leases that ended at least $1 microseconds ago, released rows and the
-- placeholders of names nobody watches any more (a free row holds nothing: it only lets the next
-- grant of its name be one UPDATE). $2 notification channel. A lease that expired without a
-- release is announced as 'E' with its stored name (a released row was announced when released).
-- At most 1000 rows per statement (the caller repeats while a batch was full).
-- Token order (see acquire.sql): a row is deleted only under the name's advisory lock, which an
-- insert of the name holds from its token's draw to its commit; a name whose lock is held now is
-- skipped (its row stays for the next purge). The lock is tried only for the candidates.
WITH candidates AS MATERIALIZED (
    SELECT c.name FROM ${table} c
    WHERE c.expires_at <= now() - $1::bigint * interval '1 microsecond' AND c.watched_until <= now()
    LIMIT 1000
), unlocked AS MATERIALIZED (
    SELECT k.name FROM candidates k WHERE pg_try_advisory_xact_lock(hashtextextended(k.name, 7305467431562270022))
), purged AS (
    DELETE FROM ${table} AS l
    USING unlocked u
    WHERE l.name = u.name
      AND l.expires_at <= now() - $1::bigint * interval '1 microsecond' AND l.watched_until <= now()
    RETURNING l.name, l.token, l.owner
), notified AS MATERIALIZED (
    SELECT CASE WHEN p.owner <> '' THEN pg_notify($2, 'E ' || p.token || ' -1 ' || p.name) IS NULL ELSE false END AS sent
    FROM purged p
)
SELECT count(*) AS purged, (SELECT count(*) FROM candidates) AS candidates FROM notified
