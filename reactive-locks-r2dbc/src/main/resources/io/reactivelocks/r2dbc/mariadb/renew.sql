-- Renews one lease: owner- and token-checked and still live by the server's clock (an expired lease
-- is not revived: the client has given it up by its own, earlier, deadline). One row or none.
--   ? TTL in microseconds  ? name (stored form)  ? owner  ? token
UPDATE ${table}
SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)
