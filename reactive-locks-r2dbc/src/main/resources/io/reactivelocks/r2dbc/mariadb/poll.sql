-- The poller's read of the names its backend waits for or observes: each name's holder and whether its
-- lease is live by the server's clock. ${names} is one '?' per name (stored form).
SELECT name, owner, token, expires_at > UTC_TIMESTAMP(6) AS live
FROM ${table}
WHERE name IN (${names})
