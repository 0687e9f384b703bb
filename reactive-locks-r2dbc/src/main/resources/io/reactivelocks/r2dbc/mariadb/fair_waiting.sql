-- The live waiters of a name.   ? name (stored form)
SELECT COUNT(*) AS waiting FROM ${waiter_table} WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)
