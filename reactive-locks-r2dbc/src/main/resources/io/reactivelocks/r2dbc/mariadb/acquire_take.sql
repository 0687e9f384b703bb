-- Step 4 of a grant to a new holder: the row becomes the holder's, committed with the transaction.
--   ? owner  ? token  ? TTL in microseconds  ? payload (stored form) or NULL  ? name (stored form)
UPDATE ${table}
SET owner = ?, token = ?, expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, payload = ?
WHERE name = ?
