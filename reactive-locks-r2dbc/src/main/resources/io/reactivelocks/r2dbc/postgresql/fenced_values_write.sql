-- Fenced write (or delete: $2 NULL) of one key, on Fencing.admits: the row is inserted, or updated
-- only when the writer's token is at least the stored fence (equal = the same grant writing
-- again). ON CONFLICT locks the row and re-checks the WHERE on its latest version, so concurrent
-- writers are serialized and the highest token wins. Returns a row when admitted.
--   $1 key (stored form)  $2 value (bytea, or NULL to delete)  $3 token
INSERT INTO ${fenced_table} AS v (key, value, fence) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE
    SET value = excluded.value,
        fence = excluded.fence
    WHERE v.fence <= excluded.fence
RETURNING v.fence
