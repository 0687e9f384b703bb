-- Step 1 of a capture (one READ COMMITTED transaction): the capturable tasks (pending, failed with a
-- retry left, or in progress with an expired claim: ready_at is the claim's deadline), oldest first,
-- locked; rows another capture has locked are skipped, not waited for.   ? queue  ? limit
SELECT task_id
FROM ${task_table}
WHERE queue = ? AND status IN ('pending', 'failed', 'in_progress') AND ready_at <= UTC_TIMESTAMP(6)
ORDER BY ready_at
LIMIT ?
FOR UPDATE SKIP LOCKED
