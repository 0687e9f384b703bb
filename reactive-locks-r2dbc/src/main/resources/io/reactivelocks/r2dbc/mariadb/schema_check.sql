-- Which of the store's objects exist: ${objects} is one '?' per table or sequence name.
--   ? the database, or NULL for the connection's own
SELECT TABLE_NAME AS name
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME IN (${objects})
