-- Step 3: the permits held now, and how long until the first of them expires.   ? name (stored form)
SELECT owner, token, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${permit_table}
WHERE name = ? AND owner <> ''
FOR UPDATE
