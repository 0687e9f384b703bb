-- Drops the owner's row (its intent) before its grant is inserted.   ? name (stored form)  ? owner
DELETE FROM ${rw_table}
WHERE name = ? AND owner = ?
