-- Deletes rows whose lease ended at least $1 microseconds ago (garbage: an expired row is free
-- already). $2 notification channel. Each purged lock is announced as 'E' with its stored name.
WITH purged AS (
    DELETE FROM ${table}
    WHERE expires_at <= now() - $1::bigint * interval '1 microsecond'
    RETURNING name, token
), notified AS MATERIALIZED (
    SELECT pg_notify($2, 'E ' || p.token || ' -1 ' || p.name) AS sent FROM purged p
)
SELECT count(*) AS purged FROM notified
