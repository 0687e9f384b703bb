-- Is the semaphore (or read-write lock) schema there? $1 the table, $2 the grant function's name (text)
-- A table without the watched_until column (created by an older version) is not ready: its script adds it
-- and replaces the grant function.
SELECT to_regclass($1) IS NOT NULL AND to_regproc($2) IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                   WHERE a.attrelid = to_regclass($1) AND a.attname = 'watched_until' AND NOT a.attisdropped) AS ready
