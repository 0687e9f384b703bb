-- Step 3, when the token is at least the fence (equal: the same grant writing again): the value and
-- the new fence.   ? value or NULL  ? token  ? key (stored form)
UPDATE ${fenced_table} SET value = ?, fence = ? WHERE k = ?
