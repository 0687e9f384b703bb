-- A revocation request, recorded or renewed.   ? name (stored form)  ? kind  ? owner  ? reason
INSERT INTO ${revocation_table} (name, kind, owner, reason, asked_at)
VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6))
ON DUPLICATE KEY UPDATE reason = VALUES(reason), asked_at = VALUES(asked_at)
