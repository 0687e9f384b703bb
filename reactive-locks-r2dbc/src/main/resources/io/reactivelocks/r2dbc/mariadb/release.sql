-- Owner-checked release (compare-and-delete): only the row of this owner goes.
--   ? name (stored form)  ? owner
DELETE FROM ${table}
WHERE name = ? AND owner = ?
