-- Is the schema there? Object names are bound as parameters (regclass text, e.g. '"public"."reactive_locks"').
-- $1 the lock table, $2 the sequence, $3 the window table, $4 the watchers table, $5 the notify
-- function's signature (regprocedure text)
-- A lock table without the payload column (created by an older version) is not ready: migrate adds it;
-- nor is a schema without the watchers table and its functions (older versions notified always).
SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL
       AND to_regclass($4) IS NOT NULL AND to_regprocedure($5) IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                   WHERE attrelid = to_regclass($1) AND attname = 'payload' AND NOT attisdropped) AS ready
