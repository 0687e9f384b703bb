-- On close: owner-checked delete of whatever this backend's owners may still have (leases lost
-- and never released, grants whose answer never arrived). $1 names text[]  $2 owners text[]
-- $3 notification channel. Each is announced like a release ('R' or 'E', owner omitted).
WITH released AS (
    DELETE FROM ${table} AS l
    USING unnest($1::text[], $2::text[]) AS r(name, owner)
    WHERE l.name = r.name AND l.owner = r.owner
    RETURNING l.name, l.token, l.expires_at <= now() AS expired
), notified AS MATERIALIZED (
    SELECT pg_notify($3, CASE WHEN r.expired THEN 'E ' ELSE 'R ' END || r.token || ' -1 ' || r.name) AS sent
    FROM released r
)
SELECT count(*) AS released FROM notified
