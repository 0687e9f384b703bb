-- Step 1 of a permit grant (one READ COMMITTED transaction): lock the semaphore's guard row,
-- inserting it when missing. Grants of one semaphore are serialized from here to the commit.
--   ? name (stored form)
INSERT INTO ${permit_table} (name, owner, token, expires_at)
VALUES (?, '', 0, '1970-01-01 00:00:00')
ON DUPLICATE KEY UPDATE token = token
