-- A read-write grant as ONE request: an anonymous compound statement (BEGIN NOT ATOMIC, run by the
-- server as one statement: no stored routine to install) that runs one READ COMMITTED transaction:
--   1. lock the name's guard row (owner '', mode 'g', already expired), inserting it when missing: the
--      grants of one name are serialized from here to the COMMIT;
--   2. remove the name's expired rows (by the server's clock);
--   3. read the live rows: the owner's own grant (a retried request), whether a writer holds, how many
--      hold, how many writers wait (intents, mode 'i');
--   4. decide: a retried request gets a fresh TTL, same token; a writer is granted when nobody holds,
--      a reader when no writer holds and (writer preferring) no intent lives; the grant's token is
--      drawn here, under the guard row's lock, so a writer's exceeds every reader's before it and a
--      reader's the last writer's (a waiting writer's intent row becomes its grant). Refused: the µs
--      until the first row that can let it in expires, and a waiting writer (writer preferring)
--      records or refreshes its intent;
--   5. answer one row (granted, token, wait_us), then COMMIT.
-- Any error rolls the transaction back before it reaches the client (a deadlock, a lock wait timeout:
-- the client tries the whole grant again), so no transaction is left open on a pooled connection.
--   ? name (stored form)  ? owner  ? write (1) or read (0)  ? writer preferring (1/0)
--   ? record an intent when refused (1/0)  ? TTL in microseconds
BEGIN NOT ATOMIC
    DECLARE v_name VARBINARY(2048) DEFAULT ?;
    DECLARE v_owner VARBINARY(255) DEFAULT ?;
    DECLARE v_write BOOLEAN DEFAULT ?;
    DECLARE v_prefer BOOLEAN DEFAULT ?;
    DECLARE v_intent BOOLEAN DEFAULT ?;
    DECLARE v_ttl BIGINT DEFAULT ?;
    DECLARE v_again BIGINT;
    DECLARE v_writers INT;
    DECLARE v_holders INT;
    DECLARE v_intents INT;
    DECLARE v_token BIGINT DEFAULT NULL;
    DECLARE v_wait BIGINT DEFAULT 0;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;
    INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
        VALUES (v_name, '', 'g', 0, '1970-01-01 00:00:00')
        ON DUPLICATE KEY UPDATE token = token;
    DELETE FROM ${rw_table}
        WHERE name = v_name AND owner <> '' AND expires_at <= UTC_TIMESTAMP(6);
    SELECT MAX(IF(owner = v_owner AND mode <> 'i', token, NULL)), COALESCE(SUM(mode = 'w'), 0),
           COALESCE(SUM(mode <> 'i'), 0), COALESCE(SUM(mode = 'i'), 0)
        INTO v_again, v_writers, v_holders, v_intents
        FROM ${rw_table} WHERE name = v_name AND owner <> '' AND expires_at > UTC_TIMESTAMP(6);
    IF v_again IS NOT NULL THEN
        UPDATE ${rw_table} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND
            WHERE name = v_name AND owner = v_owner AND mode <> 'i';
        SET v_token = v_again;
    ELSEIF IF(v_write, v_holders > 0, v_writers > 0 OR (v_prefer AND v_intents > 0)) THEN
        SELECT COALESCE(MIN(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at)), 0) INTO v_wait
            FROM ${rw_table}
            WHERE name = v_name AND owner <> '' AND expires_at > UTC_TIMESTAMP(6)
              AND (mode <> 'i' OR (NOT v_write AND v_writers = 0));
        IF v_intent THEN
            INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
                VALUES (v_name, v_owner, 'i', 0, UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND)
                ON DUPLICATE KEY UPDATE expires_at = VALUES(expires_at);
        END IF;
    ELSE
        SET v_token = NEXTVAL(${sequence});
        INSERT INTO ${rw_table} (name, owner, mode, token, expires_at)
            VALUES (v_name, v_owner, IF(v_write, 'w', 'r'), v_token, UTC_TIMESTAMP(6) + INTERVAL v_ttl MICROSECOND)
            ON DUPLICATE KEY UPDATE mode = VALUES(mode), token = VALUES(token), expires_at = VALUES(expires_at);
    END IF;
    SELECT v_token IS NOT NULL AS granted, COALESCE(v_token, 0) AS token, v_wait AS wait_us;
    COMMIT;
END
