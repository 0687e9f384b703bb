-- Removes a task.   ? queue  ? task id
DELETE FROM ${task_table} WHERE queue = ? AND task_id = ?
