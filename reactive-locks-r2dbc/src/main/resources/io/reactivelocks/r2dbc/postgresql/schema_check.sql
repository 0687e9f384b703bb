-- Is the schema there? Object names are bound as parameters (regclass text, e.g. '"public"."reactive_locks"').
-- $1 the lock table, $2 the sequence, $3 the window table, $4 the watchers table, $5 the notify
-- function's signature (regprocedure text), $6 the watch function's signature
-- A lock table without the payload or watched_until column, or with the index on expires_at (created by
-- an older version) is not ready: migrate adds the columns and drops the index;
-- nor is a schema without the watchers table and its functions (older versions notified always), nor one whose
-- watch function is of an older protocol (its comment, set by watchers_schema.sql, names the version).
SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL
       AND to_regclass($4) IS NOT NULL AND to_regprocedure($5) IS NOT NULL
       AND obj_description(to_regprocedure($6), 'pg_proc') IS NOT DISTINCT FROM 'reactive-locks watchers 3: observer keys last, grant rows marked'
       AND (SELECT count(*) FROM pg_catalog.pg_attribute
            WHERE attrelid = to_regclass($1) AND attname IN ('payload', 'watched_until') AND NOT attisdropped) = 2
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a
                       ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                       WHERE i.indrelid = to_regclass($1) AND a.attname = 'expires_at') AS ready
