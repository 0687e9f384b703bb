-- Step 2 of a grant: the locked row's holder and its remaining lease by the server's clock
-- (negative or zero: expired, the lock is free). A placeholder row reads as expired.
--   ? name (stored form)
SELECT owner, token, payload, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${table}
WHERE name = ?
FOR UPDATE
