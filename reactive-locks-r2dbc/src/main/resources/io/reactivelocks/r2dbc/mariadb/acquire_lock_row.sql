-- Step 1 of a grant (one READ COMMITTED transaction): make sure the name's row exists and lock it.
-- A missing name gets a placeholder row that is already expired (free); an existing row is only
-- locked (ON DUPLICATE KEY UPDATE takes its exclusive lock). Every grant, renewal and release of
-- the name waits for this lock until the transaction ends: grants of one name are serialized.
--   ? name (stored form)
INSERT INTO ${table} (name, owner, token, expires_at, payload)
VALUES (?, '', 0, '1970-01-01 00:00:00', NULL)
ON DUPLICATE KEY UPDATE token = token
