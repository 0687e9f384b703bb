-- Owner- and token-checked payload update of a live grant (its expiry is kept).
--   ? payload (stored form) or NULL  ? name (stored form)  ? owner  ? token
UPDATE ${table}
SET payload = ?
WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6)
