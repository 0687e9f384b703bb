-- Registers tasks; a task id the queue has already is left as it is (INSERT IGNORE: the key is checked
-- at call time, so only duplicates are ignored). ${rows} is one "(?, ?, 'pending', ?, ?, ...)" per task:
--   ? queue  ? task id  ? retries  ? payload or NULL  ? its place (µs added to now, keeping the order)
INSERT IGNORE INTO ${task_table} (queue, task_id, status, retries_left, payload, ready_at, created_at, updated_at)
VALUES ${rows}
