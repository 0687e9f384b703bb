-- A retried grant of an owner that holds already: a fresh TTL, same token.
--   ? TTL in microseconds  ? name (stored form)  ? owner
UPDATE ${rw_table}
SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ? AND mode <> 'i'
