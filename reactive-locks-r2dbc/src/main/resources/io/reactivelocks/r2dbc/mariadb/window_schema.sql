-- reactive-locks: the window-lock table ("run once per period across the fleet"), created on first use.
--   ${sequence}      the fencing-token sequence, shared with the locks
--   ${window_table}  the window table (default `reactive_locks_windows`)
CREATE SEQUENCE IF NOT EXISTS ${sequence} START WITH 1 INCREMENT BY 1 MINVALUE 1 NOCYCLE ENGINE=InnoDB;

-- One row per name and period, holding the last claimed window floor(server epoch in µs / period);
-- window_no -1 is a row made by a claim that was rolled back or is in progress (nothing claimed).
CREATE TABLE IF NOT EXISTS ${window_table} (
    name       VARBINARY(2048) NOT NULL,
    period_us  BIGINT          NOT NULL,
    window_no  BIGINT          NOT NULL,
    owner      VARBINARY(255)  NOT NULL,
    token      BIGINT          NOT NULL,
    claimed_at DATETIME(6)     NOT NULL,
    PRIMARY KEY (name, period_us)
) ENGINE=InnoDB;
