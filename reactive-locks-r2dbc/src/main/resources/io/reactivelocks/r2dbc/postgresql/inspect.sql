-- Who holds the lock now, by the server's clock. $1 name (stored form)
SELECT owner, token, GREATEST(0, floor(extract(epoch FROM expires_at - now()) * 1000000))::bigint AS remaining_us,
       payload
FROM ${table}
WHERE name = $1 AND expires_at > now()
