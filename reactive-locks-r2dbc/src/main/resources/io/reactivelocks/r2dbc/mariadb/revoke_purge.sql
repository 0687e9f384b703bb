-- Forgets revocation requests older than 10 seconds.
DELETE FROM ${revocation_table} WHERE asked_at < UTC_TIMESTAMP(6) - INTERVAL 10 SECOND
