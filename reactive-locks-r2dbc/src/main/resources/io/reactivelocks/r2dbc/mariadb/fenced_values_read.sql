-- A key's value and fence.   ? key (stored form)
SELECT value, fence FROM ${fenced_table} WHERE k = ?
