-- Removes the expired waiters of a name (by the server's clock).   ? name (stored form)
DELETE FROM ${waiter_table} WHERE name = ? AND expires_at <= UTC_TIMESTAMP(6)
