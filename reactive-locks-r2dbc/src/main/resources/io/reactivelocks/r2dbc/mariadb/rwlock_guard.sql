-- Step 1 of a read-write grant (one READ COMMITTED transaction): lock the name's guard row,
-- inserting it when missing.   ? name (stored form)
INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
VALUES (?, '', 'g', 0, '1970-01-01 00:00:00')
ON DUPLICATE KEY UPDATE token = token
