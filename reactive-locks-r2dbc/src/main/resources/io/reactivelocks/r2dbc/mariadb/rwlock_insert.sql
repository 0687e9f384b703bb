-- A new grant with its token (drawn while the guard row is locked).
--   ? name (stored form)  ? owner  ? mode ('r' or 'w')  ? token  ? TTL in microseconds
INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
