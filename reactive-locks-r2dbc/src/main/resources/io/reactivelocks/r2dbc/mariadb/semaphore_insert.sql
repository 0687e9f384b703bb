-- Step 4: a new permit, with its token drawn here: this statement runs in the grant's transaction,
-- which holds the guard row's lock since step 1, and every earlier grant of the name drew its token
-- under the same lock in a transaction that committed before the lock was this one's; the sequence
-- only grows, so the token is greater than every token granted for the name before.
--   ? name (stored form)  ? owner  ? TTL in microseconds
INSERT INTO ${permit_table} (name, owner, token, expires_at)
VALUES (?, ?, NEXTVAL(${sequence}), UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
RETURNING token
