-- Step 1 of a fenced write (one READ COMMITTED transaction): lock the key's row, inserting an empty
-- one with the lowest fence when missing.   ? key (stored form)
INSERT INTO ${fenced_table} (k, value, fence)
VALUES (?, NULL, -9223372036854775808)
ON DUPLICATE KEY UPDATE fence = fence
