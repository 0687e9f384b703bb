-- Grants permits: $1 name (stored form)  $2 owners (stored form, text[])  $3 N  $4 TTL in µs
--   $5 notification channel  $6 notification key of the semaphore
SELECT granted, owner, token, wait_us FROM ${grant_fn}($1, $2::text[], $3::integer, $4::bigint, $5, $6)
