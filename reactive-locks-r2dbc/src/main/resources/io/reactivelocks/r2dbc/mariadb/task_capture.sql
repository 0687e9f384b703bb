-- A capture as ONE request: an anonymous compound statement (BEGIN NOT ATOMIC, run by the server as
-- one statement) that runs one READ COMMITTED transaction:
--   1. pick the capturable tasks (pending, failed with a retry left, or in progress with an expired
--      claim: ready_at is the claim's deadline), oldest first, at most the limit, locked; rows another
--      capture has locked are skipped, not waited for;
--   2. per picked task: the claim, with a token drawn here while the task's row is locked (the previous
--      claim of the task drew its token before it committed, and the sequence only grows), and one
--      result row of what the worker is handed (task_id, token, retries_left, attempts, payload);
--   3. when fewer tasks than the limit were claimed: one more result row (task_id NULL) with the µs until
--      the queue's next claim expires (next_us, NULL: none), which bounds the capturer's wait; COMMIT.
-- Each result row comes as a result set of its own. Any error rolls the transaction back before it
-- reaches the client (which tries a deadlock or a lock wait timeout again).
--   ? queue (stored form)  ? limit  ? owner  ? claim time in µs
BEGIN NOT ATOMIC
    DECLARE v_queue VARBINARY(1024) DEFAULT ?;
    DECLARE v_limit INT DEFAULT ?;
    DECLARE v_owner VARBINARY(255) DEFAULT ?;
    DECLARE v_claim BIGINT DEFAULT ?;
    DECLARE v_id VARBINARY(2048);
    DECLARE v_token BIGINT;
    DECLARE v_count INT DEFAULT 0;
    DECLARE v_done BOOLEAN DEFAULT FALSE;
    DECLARE picked CURSOR FOR
        SELECT task_id FROM ${task_table}
        WHERE queue = v_queue AND status IN ('pending', 'failed', 'in_progress') AND ready_at <= UTC_TIMESTAMP(6)
        ORDER BY ready_at
        LIMIT v_limit
        FOR UPDATE SKIP LOCKED;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = TRUE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    OPEN picked;
    claim_each: LOOP
        FETCH picked INTO v_id;
        IF v_done THEN
            LEAVE claim_each;
        END IF;
        SET v_token = NEXTVAL(${sequence});
        UPDATE ${task_table}
            SET status = 'in_progress', claim_owner = v_owner, claim_token = v_token,
                claim_expires_at = UTC_TIMESTAMP(6) + INTERVAL v_claim MICROSECOND,
                ready_at = UTC_TIMESTAMP(6) + INTERVAL v_claim MICROSECOND,
                attempts = attempts + 1, updated_at = UTC_TIMESTAMP(6)
            WHERE queue = v_queue AND task_id = v_id;
        SELECT task_id, v_token AS token, retries_left, attempts, payload, NULL AS next_us
            FROM ${task_table} WHERE queue = v_queue AND task_id = v_id;
        SET v_count = v_count + 1;
    END LOOP;
    CLOSE picked;
    IF v_count < v_limit THEN
        SELECT NULL AS task_id, 0 AS token, 0 AS retries_left, 0 AS attempts, NULL AS payload,
               TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MIN(ready_at)) AS next_us
            FROM ${task_table}
            WHERE queue = v_queue AND status = 'in_progress' AND ready_at > UTC_TIMESTAMP(6);
    END IF;
    COMMIT;
END
