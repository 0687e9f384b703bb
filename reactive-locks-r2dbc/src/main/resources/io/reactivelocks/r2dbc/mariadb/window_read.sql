-- Step 2: the stored window and the server's time in microseconds since the epoch (UTC arithmetic on
-- DATETIME: no session time zone takes part).   ? name (stored form)  ? period in microseconds
SELECT window_no, owner, token, TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) AS now_us
FROM ${window_table}
WHERE name = ? AND period_us = ?
FOR UPDATE
