-- One attempt at a fair lock: $1 name (stored form)  $2 owner (stored form)  $3 TTL in µs
--   $4 whether the caller waits  $5 the waiter deadline in µs  $6 the payload (stored form) or NULL
--   $7 notification channel  $8 the notification payload after the token (as acquire.sql's $5)
-- r_ahead: a queued caller's rank (waiters before it), for WaiterLine's no-herd wake-up.
SELECT r_kind, r_token, r_owner, r_remaining_us, r_payload, r_ahead
FROM ${grant_fn}($1, $2, $3::bigint, $4::boolean, $5::bigint, $6::text, $7, $8)
