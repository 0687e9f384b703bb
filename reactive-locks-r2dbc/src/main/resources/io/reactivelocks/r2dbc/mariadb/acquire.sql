-- A mutex grant in one autocommit statement. Two rows of VALUES for the same name:
--   row 1, the placeholder (owner ''): inserts an expired, free row when the name has none, else
--          changes nothing (every assignment below is guarded by VALUES(owner) <> ''). Either way this
--          statement now holds the row's exclusive lock until it ends (commits);
--   row 2, the request: always a duplicate of row 1, so it goes through ON DUPLICATE KEY UPDATE, on
--          the row locked by row 1. Its own VALUES token (0) is never stored.
-- The assignments run left to right and each sees the columns already assigned, so they are ordered:
-- token, payload and owner are taken only when the stored lease has expired (by the server's clock;
-- UTC_TIMESTAMP(6) is one instant for the whole statement, and expires_at is still the stored one
-- there); expires_at last, set when the row is now the caller's — taken just now, or held already
-- (a retried request: same token and payload, the lease set again). A live lease of another owner is
-- left as it is.
-- Token order: NEXTVAL is drawn in row 2's assignment, while this statement holds the name's row lock.
-- Every earlier grant of the name drew its token under the same lock in a statement that committed
-- before this one could take it (an insert of the same key waits for the uncommitted one; a release
-- deletes a row whose grant had committed), and the sequence only grows: the token is greater than
-- every token granted for the name before. A token is never drawn before the lock is held (no
-- NEXTVAL in VALUES, which is evaluated before the insert looks at the key).
-- RETURNING gives one row per VALUES row; the last is the row as this statement left it: the caller's
-- grant (its owner) or the live holder's (owner, token, payload, remaining lease).
--   ? name (stored form)  ? name (stored form)  ? owner  ? TTL in microseconds  ? payload (stored form) or NULL
INSERT INTO ${table} (name, owner, token, expires_at, payload)
VALUES (?, '', 0, '1970-01-01 00:00:00', NULL),
       (?, ?, 0, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?)
ON DUPLICATE KEY UPDATE
    token      = IF(VALUES(owner) <> '' AND expires_at <= UTC_TIMESTAMP(6), NEXTVAL(${sequence}), token),
    payload    = IF(VALUES(owner) <> '' AND expires_at <= UTC_TIMESTAMP(6), VALUES(payload), payload),
    owner      = IF(VALUES(owner) <> '' AND expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),
    expires_at = IF(VALUES(owner) <> '' AND owner = VALUES(owner), VALUES(expires_at), expires_at)
RETURNING owner, token, payload, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
