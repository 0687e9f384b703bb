-- A grant to the owner that holds the lock already (a retried request): same token and payload,
-- the lease set again.   ? TTL in microseconds  ? name (stored form)
UPDATE ${table}
SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ?
