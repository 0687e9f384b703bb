-- One attempt for a grant: $1 name (stored form)  $2 owner (stored form)  $3 'r' or 'w'
--   $4 writer-preferring  $5 waiting  $6 TTL in µs  $7 notification channel  $8 notification key of the lock
SELECT granted, token, wait_us FROM ${grant_fn}($1, $2, $3::"char", $4::boolean, $5::boolean, $6::bigint, $7, $8)
