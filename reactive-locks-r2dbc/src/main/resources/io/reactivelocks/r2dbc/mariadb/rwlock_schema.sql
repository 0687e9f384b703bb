-- reactive-locks: the read-write lock table (a session's read-write locks), created on first use.
-- Placeholders are validated, backquoted identifiers:
--   ${sequence}   the fencing-token sequence, shared with the locks
--   ${rw_table}   the read-write table (default `reactive_locks_rw`)
CREATE SEQUENCE IF NOT EXISTS ${sequence} START WITH 1 INCREMENT BY 1 MINVALUE 1 NOCYCLE ENGINE=InnoDB;

-- One row per grant or waiting writer's intent (or expired and not yet removed), and one guard row
-- per name (owner '', mode 'g', already expired) whose lock serializes the grants of that name:
--   name        the lock name (stored form, see StoredText.java)
--   owner       the owner id; '' for the guard row
--   mode        'r' reader, 'w' writer, 'i' a waiting writer's intent (blocks new readers), 'g' guard
--   token       the grant's fencing token, from ${sequence} (0 for intents and the guard)
--   expires_at  when the grant or intent ends, by the SERVER's clock in UTC
CREATE TABLE IF NOT EXISTS ${rw_table} (
    name       VARBINARY(2048) NOT NULL,
    owner      VARBINARY(255)  NOT NULL,
    mode       CHAR(1)         CHARACTER SET ascii NOT NULL,
    token      BIGINT          NOT NULL,
    expires_at DATETIME(6)     NOT NULL,
    PRIMARY KEY (name, owner)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS ${revocation_table} (
    name     VARBINARY(2048) NOT NULL,
    kind     CHAR(1)         CHARACTER SET ascii NOT NULL,
    owner    VARBINARY(255)  NOT NULL,
    reason   VARBINARY(4096) NOT NULL,
    asked_at DATETIME(6)     NOT NULL,
    PRIMARY KEY (name, kind, owner)
) ENGINE=InnoDB;
