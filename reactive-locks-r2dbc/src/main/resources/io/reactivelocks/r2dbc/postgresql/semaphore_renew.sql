-- Renews a batch of permits (or read-write lock grants, on their table) in one statement, each owner-
-- and token-checked and only while it has not expired; the leases come as arrays joined with unnest.
-- Answers the renewed ones.
--   $1 names (stored form)  $2 owners (stored form)  $3 tokens  $4 TTLs in µs
UPDATE ${permit_table} AS p
SET expires_at = now() + r.ttl_us * interval '1 microsecond'
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS r(name, owner, token, ttl_us)
WHERE p.name = r.name AND p.owner = r.owner AND p.token = r.token AND p.expires_at > now()
RETURNING p.name, p.owner, p.token
