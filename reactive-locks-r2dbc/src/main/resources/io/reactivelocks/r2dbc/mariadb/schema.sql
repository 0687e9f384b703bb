-- reactive-locks: the MariaDB schema of the lock (MariaDB 10.3+; see docs/stores/mariadb.md for MySQL 8).
-- Idempotent: run by MariaDbLockBackend.migrate() (and on first use in SchemaMode.CREATE), one
-- statement at a time on one connection, serialized between processes by GET_LOCK.
-- Placeholders are filled with validated identifiers ([A-Za-z_][A-Za-z0-9_]{0,63}), backquoted:
--   ${sequence}       the fencing-token sequence  (default `reactive_locks_token_seq`)
--   ${revocation_table}  revocation requests (see revocations_schema.sql)
--   ${table}          the lock table              (default `reactive_locks`)

-- Fencing tokens: one durable, monotonic sequence. NEXTVAL is drawn only while the name's row is
-- locked (see acquire.sql), so a later grant of a name always draws a greater token. Tokens may
-- skip values (a restart skips the unused part of the cache); they never repeat or go back.
CREATE SEQUENCE IF NOT EXISTS ${sequence} START WITH 1 INCREMENT BY 1 MINVALUE 1 NOCYCLE ENGINE=InnoDB;

-- One row per held (or expired, not yet taken over or released) lock.
--   name        the lock name (stored form: UTF-8 with '\' and lone surrogates escaped, see StoredText.java)
--   owner       the holder's random owner id
--   token       the fencing token of the grant, from ${sequence}
--   expires_at  when the lease ends, by the SERVER's clock in UTC (UTC_TIMESTAMP(6) + TTL at grant/renewal)
--   payload     the holder's payload (at most 4096 UTF-8 bytes, stored form as names), NULL for none
-- Binary columns: names compare byte for byte (no case folding, no trailing-space padding).
-- The primary key is the only index: every statement finds rows by name, and an index on expires_at
-- cost every grant, renewal and release its upkeep (10-15 % of B1's pairs per second) for no reader.
CREATE TABLE IF NOT EXISTS ${table} (
    name       VARBINARY(2048) NOT NULL,
    owner      VARBINARY(255)  NOT NULL,
    token      BIGINT          NOT NULL,
    expires_at DATETIME(6)     NOT NULL,
    payload    VARBINARY(8192) NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS ${revocation_table} (
    name     VARBINARY(2048) NOT NULL,
    kind     CHAR(1)         CHARACTER SET ascii NOT NULL,
    owner    VARBINARY(255)  NOT NULL,
    reason   VARBINARY(4096) NOT NULL,
    asked_at DATETIME(6)     NOT NULL,
    PRIMARY KEY (name, kind, owner)
) ENGINE=InnoDB;
