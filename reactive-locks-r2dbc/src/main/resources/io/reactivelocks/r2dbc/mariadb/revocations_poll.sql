-- The poller's read of the revocation requests for the names it watches, with their time in µs
-- since the epoch. ${names} is one '?' per name (stored form).   ? kind, then the names
SELECT name, owner, reason, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', asked_at) AS at_us
FROM ${revocation_table}
WHERE kind = ? AND name IN (${names})
