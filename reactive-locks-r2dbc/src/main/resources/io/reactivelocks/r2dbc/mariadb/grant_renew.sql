-- Renews one grant of a concept's table: owner- and token-checked and still live by the server's clock.
--   ? TTL in microseconds  ? name (stored form)  ? owner  ? token
UPDATE ${grant_table}
SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)
