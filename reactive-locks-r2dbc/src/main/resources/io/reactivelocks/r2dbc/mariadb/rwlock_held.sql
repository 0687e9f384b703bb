-- Step 3 (and the holders' read, with a live filter): the grants and intents of the name.
--   ? name (stored form)
SELECT owner, mode, token, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${rw_table}
WHERE name = ? AND owner <> '' AND expires_at > UTC_TIMESTAMP(6)
ORDER BY token
