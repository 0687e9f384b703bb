-- A window claim as ONE request: an anonymous compound statement (BEGIN NOT ATOMIC, run by the server
-- as one statement) that runs one READ COMMITTED transaction:
--   1. lock the row of (name, period), inserting one that claims nothing (window -1) when missing;
--   2. read the stored window and the server's time in microseconds since the epoch (UTC arithmetic
--      on DATETIME: no session time zone takes part);
--   3. when the stored window is older than the current one (now ÷ period), claim the current one with
--      a token drawn here, under the row's lock: the previous claim of the name drew its token before
--      it committed and let the lock go, and the sequence only grows, so the token is greater than every
--      token granted for it before;
--   4. answer one row (claimed, window, token, µs left in the current window), then COMMIT.
-- Any error rolls the transaction back before it reaches the client (which tries a deadlock or a lock
-- wait timeout again), so no transaction is left open on a pooled connection.
--   ? name (stored form)  ? period in microseconds  ? the claim's owner
BEGIN NOT ATOMIC
    DECLARE v_name VARBINARY(2048) DEFAULT ?;
    DECLARE v_period BIGINT DEFAULT ?;
    DECLARE v_owner VARBINARY(255) DEFAULT ?;
    DECLARE v_window BIGINT;
    DECLARE v_now BIGINT;
    DECLARE v_current BIGINT;
    DECLARE v_token BIGINT DEFAULT NULL;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    INSERT INTO ${window_table} (name, period_us, window_no, owner, token, claimed_at)
        VALUES (v_name, v_period, -1, '', 0, UTC_TIMESTAMP(6))
        ON DUPLICATE KEY UPDATE token = token;
    SELECT window_no, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) INTO v_window, v_now
        FROM ${window_table} WHERE name = v_name AND period_us = v_period FOR UPDATE;
    SET v_current = FLOOR(v_now / v_period);
    IF v_window < v_current THEN
        SET v_token = NEXTVAL(${sequence});
        UPDATE ${window_table}
            SET window_no = v_current, owner = v_owner, token = v_token, claimed_at = UTC_TIMESTAMP(6)
            WHERE name = v_name AND period_us = v_period;
    END IF;
    SELECT v_token IS NOT NULL AS claimed, v_current AS window_no, COALESCE(v_token, 0) AS token,
           (v_current + 1) * v_period - v_now AS remaining_us;
    COMMIT;
END
