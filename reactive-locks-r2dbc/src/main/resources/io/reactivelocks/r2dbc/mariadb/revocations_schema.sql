-- reactive-locks: revocation requests (LockAdmin.revoke), shared by the lock, the semaphores and the
-- read-write locks. MariaDB has no notification channel, so a request is a row that the holder's poller
-- reads while the holder listens; a request is kept for 10 seconds (each new request deletes older ones).
--   ${revocation_table}  the table (default `reactive_locks_revocations`)
--   name    the name (stored form)   kind  'l' lock, 's' semaphore, 'r' read-write lock
--   owner   the holder asked         reason  why, in words (UTF-8)   asked_at  when, by the server's clock
CREATE TABLE IF NOT EXISTS ${revocation_table} (
    name     VARBINARY(2048) NOT NULL,
    kind     CHAR(1)         CHARACTER SET ascii NOT NULL,
    owner    VARBINARY(255)  NOT NULL,
    reason   VARBINARY(4096) NOT NULL,
    asked_at DATETIME(6)     NOT NULL,
    PRIMARY KEY (name, kind, owner)
) ENGINE=InnoDB;
