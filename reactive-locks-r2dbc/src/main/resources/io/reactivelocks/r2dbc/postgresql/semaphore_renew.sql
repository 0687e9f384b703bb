-- Renews one permit (or read-write lock grant, on its table), owner- and token-checked, only while it has not expired.
--   $1 name (stored form)  $2 owner (stored form)  $3 token  $4 TTL in µs
UPDATE ${permit_table} SET expires_at = now() + $4::bigint * interval '1 microsecond'
WHERE name = $1 AND owner = $2 AND token = $3 AND expires_at > now()
RETURNING token
