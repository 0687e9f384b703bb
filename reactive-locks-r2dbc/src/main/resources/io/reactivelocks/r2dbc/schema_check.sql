-- Is the schema there? Object names are bound as parameters (regclass text, e.g. '"public"."reactive_locks"').
-- $1 the lock table, $2 the sequence, $3 the window table
SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL AS ready
