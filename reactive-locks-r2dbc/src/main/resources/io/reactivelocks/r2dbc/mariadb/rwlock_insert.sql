-- A new grant, in place of the owner's intent if it has one (the same key), with its token drawn here:
-- this statement runs in the grant's transaction, which holds the guard row's lock since step 1, and
-- every earlier grant of the name drew its token under the same lock in a transaction that committed
-- before the lock was this one's; the sequence only grows, so the token is greater than every token
-- granted for the name before.
--   ? name (stored form)  ? owner  ? mode ('r' or 'w')  ? TTL in microseconds
INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
VALUES (?, ?, ?, NEXTVAL(${sequence}), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
ON DUPLICATE KEY UPDATE mode = VALUES(mode), token = VALUES(token), expires_at = VALUES(expires_at)
RETURNING token
