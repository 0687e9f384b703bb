-- Is the fenced-values table there? $1 the table (regclass text)
SELECT to_regclass($1) IS NOT NULL AS ready
