-- Step 3, when the stored window is older than the current one: the current window is claimed.
--   ? window  ? owner  ? token  ? name (stored form)  ? period in microseconds
UPDATE ${window_table}
SET window_no = ?, owner = ?, token = ?, claimed_at = UTC_TIMESTAMP(6)
WHERE name = ? AND period_us = ?
