-- How many live waiters a fair lock's line holds, by the server's clock, for the admin's listing.
-- $1 name (stored form)
SELECT count(*) AS waiting
FROM ${waiter_table}
WHERE name = $1 AND expires_at > now()
