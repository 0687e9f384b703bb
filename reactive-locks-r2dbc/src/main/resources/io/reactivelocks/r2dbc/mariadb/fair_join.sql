-- A fair-lock attempt that fair_acquire.sql did not grant, as ONE request: an anonymous compound
-- statement (BEGIN NOT ATOMIC, run by the server as one statement) that decides again in one READ
-- COMMITTED transaction holding the name's row lock of the lock table:
--   1. lock the name's row (inserting an expired placeholder when there is none), remove the line's
--      expired entries, read the holder (owner, token, payload, µs of lease left);
--   2. the caller holds a live lease already (a retried request): the lease is set again, same token,
--      and the caller leaves the line — granted;
--   3. the lease has expired and nobody waits before the caller (the first live entry of another owner
--      than the row's, by place; the caller's own entry does not count): the caller takes the row with a
--      token drawn here, under the row's lock (as acquire.sql: every earlier grant of the name drew its
--      token under the same lock and committed first, and the sequence only grows), and leaves the line
--      — granted;
--   4. else, waiting: the caller's entry is put in line (a place from the sequence, drawn under the row's
--      lock, so after every entry put before it) or its deadline refreshed, and the waiters before it
--      are counted (the entry of the row's owner left out: a holder is not waiting) — queued; not
--      waiting: busy.
-- Answers one row: answer ('g' granted, 'q' queued, 'b' busy), token (the grant's, or the holder's),
-- owner, payload and remaining_us (the holder's), head_remaining_us (the first waiter's deadline, when
-- the lease had expired), ahead (waiters before a queued caller). Any error rolls the transaction back
-- before it reaches the client (which tries a deadlock or a lock wait timeout again).
--   ? name (stored form)  ? owner  ? TTL in µs  ? payload (stored form) or NULL  ? waits (1/0)
--   ? the line entry's deadline in µs
BEGIN NOT ATOMIC
    DECLARE v_name VARBINARY(2048) DEFAULT ?;
    DECLARE v_owner VARBINARY(255) DEFAULT ?;
    DECLARE v_ttl BIGINT DEFAULT ?;
    DECLARE v_payload VARBINARY(8192) DEFAULT ?;
    DECLARE v_waits BOOLEAN DEFAULT ?;
    DECLARE v_deadline BIGINT DEFAULT ?;
    DECLARE v_holder VARBINARY(255);
    DECLARE v_token BIGINT;
    DECLARE v_held_payload VARBINARY(8192);
    DECLARE v_remaining BIGINT;
    DECLARE v_head VARBINARY(255) DEFAULT NULL;
    DECLARE v_head_remaining BIGINT DEFAULT NULL;
    DECLARE v_ahead BIGINT DEFAULT 0;
    DECLARE v_answer CHAR(1) DEFAULT 'b';
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    INSERT INTO ${table} (name, owner, token, expires_at, payload)
        VALUES (v_name, '', 0, '1970-01-01 00:00:00', NULL)
        ON DUPLICATE KEY UPDATE token = token;
    DELETE FROM ${waiter_table} WHERE name = v_name AND expires_at <= UTC_TIMESTAMP(6);
    SELECT owner, token, payload, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at)
        INTO v_holder, v_token, v_held_payload, v_remaining
        FROM ${table} WHERE name = v_name FOR UPDATE;
    IF v_remaining > 0 AND v_holder = v_owner THEN
        UPDATE ${table} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND WHERE name = v_name;
        DELETE FROM ${waiter_table} WHERE name = v_name AND owner = v_owner;
        SET v_answer = 'g';
    ELSE
        IF v_remaining <= 0 THEN
            SELECT w.owner, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), w.expires_at) INTO v_head, v_head_remaining
                FROM ${waiter_table} w
                WHERE w.name = v_name AND w.owner <> v_holder
                ORDER BY w.seq
                LIMIT 1;
            IF v_head = v_owner THEN
                SET v_head = NULL;
            END IF;
        END IF;
        IF v_remaining <= 0 AND v_head IS NULL THEN
            SET v_token = NEXTVAL(${sequence});
            UPDATE ${table}
                SET owner = v_owner, token = v_token, expires_at = UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND,
                    payload = v_payload
                WHERE name = v_name;
            DELETE FROM ${waiter_table} WHERE name = v_name AND owner = v_owner;
            SET v_answer = 'g';
        ELSEIF v_waits THEN
            INSERT INTO ${waiter_table} (name, owner, seq, expires_at)
                VALUES (v_name, v_owner, NEXTVAL(${sequence}), UTC_TIMESTAMP(6) + INTERVAL v_deadline MICROSECOND)
                ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at);
            SELECT COUNT(*) INTO v_ahead
                FROM ${waiter_table} w
                WHERE w.name = v_name AND w.owner <> v_holder
                  AND w.seq < (SELECT m.seq FROM ${waiter_table} m WHERE m.name = v_name AND m.owner = v_owner);
            SET v_answer = 'q';
        END IF;
    END IF;
    SELECT v_answer AS answer, v_token AS token, v_holder AS owner, v_held_payload AS payload,
           v_remaining AS remaining_us, v_head_remaining AS head_remaining_us, v_ahead AS ahead;
    COMMIT;
END
