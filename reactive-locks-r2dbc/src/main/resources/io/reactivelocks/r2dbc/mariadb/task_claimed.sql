-- Step 3, per claimed task: what the worker is handed.   ? queue  ? task id
SELECT retries_left, attempts, payload FROM ${task_table} WHERE queue = ? AND task_id = ?
