-- Is the semaphore (or read-write lock) schema there? $1 the table, $2 the grant function's name (text)
SELECT to_regclass($1) IS NOT NULL AND to_regproc($2) IS NOT NULL AS ready
