-- Who holds the lock now, by the server's clock.   ? name (stored form)
SELECT owner, token, payload, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${table}
WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)
