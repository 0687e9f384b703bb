-- A fair-lock grant in one autocommit statement, tried first: the mutex's acquire.sql, taking the row
-- only when, besides the lease having expired, nobody waits in line before the caller. Two rows of
-- VALUES for the same name (see acquire.sql): row 1 locks the name's row (inserting an expired
-- placeholder when there is none), row 2 goes through ON DUPLICATE KEY UPDATE on the locked row.
-- "Before the caller" is a live entry of the waiters table of another owner with a smaller place than
-- the caller's live entry (any place, when the caller has none); the entry of the row's holder is left
-- out (a holder whose lease ended before its entry was removed is not waiting). The subqueries refer to
-- the locked row (correlated), so they are read while this statement holds the row's lock: an entry is
-- only put in line by a transaction that holds the same lock (fair_enqueue.sql), so every entry put in
-- line before this statement is seen. Token order as in acquire.sql: NEXTVAL is drawn under the lock.
-- When the row is not taken, the caller's entry is not touched: the caller queues (or answers busy)
-- in a transaction of its own, which decides again. "leaving": whether the line has an entry to remove
-- once the caller holds the lock (its own, or an expired one: fair_leave_purge.sql), so that a grant
-- with nothing to remove sends nothing more.
-- The condition is evaluated once, in the first assignment, into the session variable @rl_fair_take
-- (assignments of ON DUPLICATE KEY UPDATE run left to right on the row as it was, each seeing the
-- columns set before it — what acquire.sql's ordered assignments rely on; the variable is set before
-- it is read, for each of the two rows, so a value left by an earlier statement of the session is never
-- used). MySQL 8 accepts a variable assigned inside an expression with a deprecation warning.
--   ? name  ? name  ? owner  ? TTL in microseconds  ? payload or NULL, then ? owner  ? owner, then
--   ? name  ? owner
INSERT INTO ${table} (name, owner, token, expires_at, payload)
VALUES (?, '', 0, '1970-01-01 00:00:00', NULL),
       (?, ?, 0, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?)
ON DUPLICATE KEY UPDATE
    token      = IF((@rl_fair_take := (VALUES(owner) <> '' AND expires_at <= UTC_TIMESTAMP(6) AND NOT EXISTS (
                     SELECT 1 FROM ${waiter_table} w
                     WHERE w.name = ${table}.name AND w.owner <> ? AND w.owner <> ${table}.owner
                       AND w.expires_at > UTC_TIMESTAMP(6)
                       AND w.seq < COALESCE((SELECT m.seq FROM ${waiter_table} m WHERE m.name = ${table}.name
                                             AND m.owner = ? AND m.expires_at > UTC_TIMESTAMP(6)), 9223372036854775807)))),
                     NEXTVAL(${sequence}), token),
    payload    = IF(@rl_fair_take, VALUES(payload), payload),
    owner      = IF(@rl_fair_take, VALUES(owner), owner),
    expires_at = IF(VALUES(owner) <> '' AND owner = VALUES(owner), VALUES(expires_at), expires_at)
RETURNING owner, token, payload, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us,
          EXISTS (SELECT 1 FROM ${waiter_table} w WHERE w.name = ? AND (w.owner = ? OR w.expires_at <= UTC_TIMESTAMP(6))) AS leaving
