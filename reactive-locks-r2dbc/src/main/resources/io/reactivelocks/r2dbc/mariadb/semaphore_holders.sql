-- The unexpired permits of a semaphore, in token order.   ? name (stored form)
SELECT owner, token, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${permit_table}
WHERE name = ? AND owner <> '' AND expires_at > UTC_TIMESTAMP(6)
ORDER BY token
