-- reactive-locks: the semaphore permits table (a session's semaphores), created on first use.
-- Placeholders are validated, backquoted identifiers:
--   ${sequence}      the fencing-token sequence, shared with the locks
--   ${permit_table}  the permits table (default `reactive_locks_permits`)
CREATE SEQUENCE IF NOT EXISTS ${sequence} START WITH 1 INCREMENT BY 1 MINVALUE 1 NOCYCLE ENGINE=InnoDB;

-- One row per permit held (or expired and not yet removed), and one guard row per semaphore name
-- (owner '', already expired, never a holder) whose lock serializes the grants of that name:
--   name        the semaphore name (stored form, see StoredText.java)
--   owner       the permit's owner id; '' for the guard row
--   token       its fencing token, from ${sequence}
--   expires_at  when the permit ends, by the SERVER's clock in UTC
CREATE TABLE IF NOT EXISTS ${permit_table} (
    name       VARBINARY(2048) NOT NULL,
    owner      VARBINARY(255)  NOT NULL,
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
