-- Is the task schema there? $1 the task table, $2 the sequence (regclass text, e.g. '"public"."reactive_lock_tasks"')
SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS ready
