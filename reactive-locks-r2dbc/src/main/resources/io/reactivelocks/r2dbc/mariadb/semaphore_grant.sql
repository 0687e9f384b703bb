-- A permit grant as ONE request: an anonymous compound statement (BEGIN NOT ATOMIC, run by the server
-- as one statement: no stored routine to install) that runs one READ COMMITTED transaction:
--   1. lock the semaphore's guard row (owner '', already expired, never a holder), inserting it when
--      missing: the grants of one name are serialized from here to the COMMIT;
--   2. remove the name's expired permits (by the server's clock);
--   3. count the permits held now, and whether the first owner holds one (a retried request);
--   4. a retried request gets a fresh TTL on its owners' permits (same tokens); else, while the permits
--      held plus the new ones are at most N, insert one permit per owner, each with a token drawn here,
--      under the guard row's lock: every earlier grant of the name drew its token under the same lock
--      in a transaction that committed before the lock was this one's, and the sequence only grows,
--      so each token is greater than every token granted for the name before;
--   5. answer one row per owner (granted 1, owner, token) or one row (granted 0, µs until the first
--      permit held expires), then COMMIT.
-- Any error rolls the transaction back before it reaches the client (a deadlock, a lock wait timeout:
-- the client tries the whole grant again), so no transaction is left open on a pooled connection.
--   ? name (stored form)  ? N  ? TTL in microseconds  ? the first owner
--   ${owner_marks}: one ? per owner, twice (the retried owners' renewal, the answer)
--   ${owner_rows}: one row per owner (the new permits)
BEGIN NOT ATOMIC
    DECLARE v_name VARBINARY(2048) DEFAULT ?;
    DECLARE v_permits INT DEFAULT ?;
    DECLARE v_ttl BIGINT DEFAULT ?;
    DECLARE v_first VARBINARY(255) DEFAULT ?;
    DECLARE v_held INT;
    DECLARE v_again INT;
    DECLARE v_granted BOOLEAN DEFAULT TRUE;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    INSERT INTO ${permit_table} (name, owner, token, expires_at)
        VALUES (v_name, '', 0, '1970-01-01 00:00:00')
        ON DUPLICATE KEY UPDATE token = token;
    DELETE FROM ${permit_table}
        WHERE name = v_name AND owner <> '' AND expires_at <= UTC_TIMESTAMP(6);
    SELECT COUNT(*), COALESCE(SUM(owner = v_first), 0) INTO v_held, v_again
        FROM ${permit_table} WHERE name = v_name AND owner <> '' FOR UPDATE;
    IF v_again > 0 THEN
        UPDATE ${permit_table} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND
            WHERE name = v_name AND owner IN (${owner_marks});
    ELSEIF v_held + ${owner_count} <= v_permits THEN
        INSERT INTO ${permit_table} (name, owner, token, expires_at) VALUES ${owner_rows};
    ELSE
        SET v_granted = FALSE;
    END IF;
    IF v_granted THEN
        SELECT 1 AS granted, owner, token, 0 AS wait_us
            FROM ${permit_table} WHERE name = v_name AND owner IN (${owner_marks});
    ELSE
        SELECT 0 AS granted, '' AS owner, 0 AS token,
               COALESCE(MIN(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at)), 0) AS wait_us
            FROM ${permit_table} WHERE name = v_name AND owner <> '';
    END IF;
    COMMIT;
END
