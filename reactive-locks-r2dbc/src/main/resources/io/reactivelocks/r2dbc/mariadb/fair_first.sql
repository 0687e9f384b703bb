-- The head of a name's line and how long its entry lives, the entry of the row's last holder left out
-- (one whose lease ended before its entry was removed is not waiting).
--   ? name (stored form)  ? the row's last holder, or ''
SELECT owner, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS remaining_us
FROM ${waiter_table}
WHERE name = ? AND owner <> ?
ORDER BY seq
LIMIT 1
