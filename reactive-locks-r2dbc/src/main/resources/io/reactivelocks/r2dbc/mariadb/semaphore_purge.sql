-- Step 2: remove the expired permits of the semaphore (by the server's clock).   ? name (stored form)
DELETE FROM ${permit_table}
WHERE name = ? AND owner <> '' AND expires_at <= UTC_TIMESTAMP(6)
