-- How many waiters are in line before one, the holder's entry left out (a waiter granted by
-- fair_acquire.sql leaves the line in a statement of its own, just after its grant).
--   ? name (stored form)  ? the holder, or '' for none  ? name again  ? owner
SELECT COUNT(*) AS ahead
FROM ${waiter_table}
WHERE name = ? AND owner <> ? AND seq < (SELECT w.seq FROM ${waiter_table} w WHERE w.name = ? AND w.owner = ?)
