-- The unexpired permits of a semaphore, in token order.  $1 name (stored form)
SELECT owner, token, (extract(epoch FROM expires_at - now()) * 1000000)::bigint AS remaining_us
FROM ${permit_table} WHERE name = $1 AND expires_at > now() ORDER BY token
