-- Is the fair lock schema there? $1 the waiters table, $2 the grant function's name (text). A grant
-- function without the rank (r_ahead, added later) is not ready: the schema script replaces it.
SELECT to_regclass($1) IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.pg_proc p
                   WHERE p.oid = to_regproc($2) AND 'r_ahead' = ANY (p.proargnames)) AS ready
