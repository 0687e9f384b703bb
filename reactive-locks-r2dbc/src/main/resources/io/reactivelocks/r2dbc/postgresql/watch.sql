-- Registers or renews the keys this client watches ($1 text[]) for its listener id ($2) until
-- now() + $3 µs; returns the keys that had no live row (new or lapsed). See watchers_schema.sql.
SELECT k FROM ${watch_fn}($1::text[], $2, $3::bigint) AS k
