-- Whether a grant is live with the given payload (after an UPDATE that reported no changed row:
-- a server that counts changed rather than found rows reports 0 when the payload was the same).
--   ? name (stored form)  ? owner  ? token  ? payload or NULL (NULL-safe comparison)
SELECT 1 AS held
FROM ${table}
WHERE name = ? AND owner = ? AND token = ? AND expires_at > UTC_TIMESTAMP(6) AND payload <=> ?
