-- The names with a live row that start with a prefix, compared byte for byte (never LIKE).
--   ? the prefix's length in bytes  ? the prefix (stored form)
SELECT name
FROM ${state_table}
WHERE LEFT(name, ?) = ? AND expires_at > UTC_TIMESTAMP(6)
