-- Puts a waiter in line, or refreshes its entry's deadline keeping its place.
--   ? name (stored form)  ? owner  ? seq (from the sequence)  ? entry deadline in microseconds
INSERT INTO ${waiter_table} (name, owner, seq, expires_at)
VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at)
