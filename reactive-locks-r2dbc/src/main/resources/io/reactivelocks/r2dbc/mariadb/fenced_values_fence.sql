-- Step 2: the key's fence.   ? key (stored form)
SELECT fence FROM ${fenced_table} WHERE k = ? FOR UPDATE
