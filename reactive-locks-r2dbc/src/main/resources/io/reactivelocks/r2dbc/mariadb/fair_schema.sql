-- reactive-locks: the fair lock's waiters table (a session's fair locks), created on first use. The
-- holders are rows of the lock table; this table keeps the line behind them.
--   ${sequence}      the sequence that orders the line (shared with the locks' tokens)
--   ${waiter_table}  the waiters table (default `reactive_locks_waiters`)
CREATE SEQUENCE IF NOT EXISTS ${sequence} START WITH 1 INCREMENT BY 1 MINVALUE 1 NOCYCLE ENGINE=InnoDB;

-- One row per waiter in line: its place (seq, from the sequence when it first asked) and the deadline
-- of its entry by the SERVER's clock in UTC (renewed each time it asks; an abandoned waiter's row expires).
CREATE TABLE IF NOT EXISTS ${waiter_table} (
    name       VARBINARY(2048) NOT NULL,
    owner      VARBINARY(255)  NOT NULL,
    seq        BIGINT          NOT NULL,
    expires_at DATETIME(6)     NOT NULL,
    PRIMARY KEY (name, owner),
    KEY ${waiter_index} (name, seq)
) ENGINE=InnoDB;
