-- Reads one fenced value: $1 key (stored form). No row, or a NULL value, means no value.
SELECT value, fence FROM ${fenced_table} WHERE key = $1
