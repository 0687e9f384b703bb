-- A waiter granted by fair_acquire.sql leaves the line, and the expired entries of the name go with
-- it (by the server's clock; the transaction's fair_purge.sql did this for grants made there).
--   ? name (stored form)  ? owner
DELETE FROM ${waiter_table} WHERE name = ? AND (owner = ? OR expires_at <= UTC_TIMESTAMP(6))
