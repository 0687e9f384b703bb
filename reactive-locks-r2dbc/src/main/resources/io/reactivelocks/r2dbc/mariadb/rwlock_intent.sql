-- A waiting writer's intent, recorded or refreshed (it blocks new readers while it lives).
--   ? name (stored form)  ? owner  ? TTL in microseconds
INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
VALUES (?, ?, 'i', 0, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at)
