-- Owner-checked release of one grant of a concept's table.   ? name (stored form)  ? owner
DELETE FROM ${grant_table}
WHERE name = ? AND owner = ? AND owner <> ''
