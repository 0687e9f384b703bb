-- A waiter leaves the line (granted, or gave up).   ? name (stored form)  ? owner
DELETE FROM ${waiter_table} WHERE name = ? AND owner = ?
