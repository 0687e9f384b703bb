-- A retried grant of owners that hold already: their permits get a fresh TTL, same tokens.
--   ? TTL in microseconds  ? name (stored form)  ? owner
UPDATE ${permit_table}
SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ?
