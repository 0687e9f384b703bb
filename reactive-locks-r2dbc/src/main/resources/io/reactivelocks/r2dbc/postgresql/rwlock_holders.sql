-- The unexpired grants and intents of a read-write lock, in token order.  $1 name (stored form)
SELECT owner, mode::text AS mode, token, (extract(epoch FROM expires_at - now()) * 1000000)::bigint AS remaining_us
FROM ${rw_table} WHERE name = $1 AND expires_at > now() ORDER BY token
