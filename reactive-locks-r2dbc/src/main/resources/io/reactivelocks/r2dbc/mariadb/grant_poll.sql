-- The poller's read of the names waited for in a concept's table: per name, a fingerprint of its live
-- grants (their count and the sum of their tokens: a grant replaced by another changes it, tokens
-- being new each time). ${names} is one '?' per name (stored form).
SELECT name, CONCAT(COUNT(*), '/', SUM(token)) AS owner, COUNT(*) AS token, 1 AS live
FROM ${grant_table}
WHERE name IN (${names}) AND owner <> '' AND expires_at > UTC_TIMESTAMP(6)
GROUP BY name
