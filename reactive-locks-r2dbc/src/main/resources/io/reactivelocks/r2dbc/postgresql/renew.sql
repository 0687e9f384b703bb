-- Renews a batch of leases in ONE statement. Each lease is checked against its owner AND token
-- and must still be live by the server's clock: an expired lease is not revived (the client has
-- given it up by its own, earlier, deadline).
--   $1 names text[]  $2 owners text[]  $3 tokens bigint[]  $4 TTLs in microseconds bigint[]
-- Returns the renewed leases; the client maps them back to the requests. Rows of one owner only
-- are locked, so concurrent batches of different clients never wait on each other in a cycle.
UPDATE ${table} AS l
SET expires_at = now() + r.ttl_us * interval '1 microsecond'
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS r(name, owner, token, ttl_us)
WHERE l.name = r.name AND l.owner = r.owner AND l.token = r.token AND l.expires_at > now()
RETURNING l.name, l.owner, l.token
