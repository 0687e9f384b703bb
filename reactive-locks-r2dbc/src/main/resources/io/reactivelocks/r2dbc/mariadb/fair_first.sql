-- The head of a name's line and how long its entry lives.   ? name (stored form)
SELECT owner, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${waiter_table}
WHERE name = ?
ORDER BY seq
LIMIT 1
