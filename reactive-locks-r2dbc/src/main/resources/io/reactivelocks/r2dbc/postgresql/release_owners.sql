-- On close: owner-checked release (as release.sql: the rows stay, freed) of whatever this backend's owners may still have (leases lost
-- and never released, grants whose answer never arrived). $1 names text[]  $2 owners text[]
-- $3 notification channel. Each is announced like a release ('R' or 'E', owner omitted).
WITH released AS (
    UPDATE ${table} AS l
    SET owner = '', payload = NULL,
        expires_at = CASE WHEN l.expires_at <= now() THEN l.expires_at ELSE '-infinity'::timestamptz END
    FROM unnest($1::text[], $2::text[]) AS r(name, owner)
    WHERE l.name = r.name AND l.owner = r.owner
    RETURNING l.name, l.token, l.expires_at <> '-infinity' AS expired
), notified AS MATERIALIZED (
    SELECT pg_notify($3, CASE WHEN r.expired THEN 'E ' ELSE 'R ' END || r.token || ' -1 ' || r.name) AS sent
    FROM released r
)
SELECT count(*) AS released FROM notified
