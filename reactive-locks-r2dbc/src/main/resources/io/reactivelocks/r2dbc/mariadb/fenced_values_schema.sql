-- reactive-locks: the fenced values table (a session's fenced values), created on first use.
--   ${fenced_table}  the table (default `reactive_locks_fenced_values`)
-- One row per key: its value (NULL once deleted) and the highest fencing token written with it.
--   k      the key (stored form, see StoredText.java)
--   value  the value's UTF-8 bytes, NULL when deleted (the fence stays)
--   fence  the highest token seen for the key
CREATE TABLE IF NOT EXISTS ${fenced_table} (
    k     VARBINARY(2048) NOT NULL,
    value LONGBLOB        NULL,
    fence BIGINT          NOT NULL,
    PRIMARY KEY (k)
) ENGINE=InnoDB;
