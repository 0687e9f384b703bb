-- Step 1 of a window claim (one READ COMMITTED transaction): lock the row of (name, period),
-- inserting one that claims nothing when missing.   ? name (stored form)  ? period in microseconds
INSERT INTO ${window_table} (name, period_us, window_no, owner, token, claimed_at)
VALUES (?, ?, -1, '', 0, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE token = token
