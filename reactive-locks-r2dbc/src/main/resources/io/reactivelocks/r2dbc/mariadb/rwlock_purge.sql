-- Step 2: remove the expired grants and intents of the name (by the server's clock).   ? name (stored form)
DELETE FROM ${rw_table}
WHERE name = ? AND owner <> '' AND expires_at <= UTC_TIMESTAMP(6)
