-- Step 4: a new permit with its token (drawn while the guard row is locked).
--   ? name (stored form)  ? owner  ? token  ? TTL in microseconds
INSERT INTO ${permit_table} (name, owner, token, expires_at)
VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
