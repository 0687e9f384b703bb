-- How many waiters are in line before one.   ? name (stored form)  ? name again  ? owner
SELECT COUNT(*) AS ahead
FROM ${waiter_table}
WHERE name = ? AND seq < (SELECT w.seq FROM ${waiter_table} w WHERE w.name = ? AND w.owner = ?)
