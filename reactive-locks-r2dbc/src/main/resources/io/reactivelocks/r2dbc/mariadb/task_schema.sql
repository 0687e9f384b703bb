-- reactive-locks: the task table (a session's task queues), created on first use.
--   ${sequence}      the fencing-token sequence, shared with the locks
--   ${task_table}    the task table (default `reactive_locks_tasks`)
--   ${ready_index}   its index on (queue, ready_at)
CREATE SEQUENCE IF NOT EXISTS ${sequence} START WITH 1 INCREMENT BY 1 MINVALUE 1 NOCYCLE ENGINE=InnoDB;

-- One row per task:
--   queue, task_id    the key (stored form, see StoredText.java; 1024 and 2048 bytes at most)
--   status            pending, in_progress, done, failed (a retry is left), dead (none is)
--   retries_left      failures still allowed;  attempts: captures so far
--   claim_owner, claim_token, claim_expires_at   the last capture: its owner, fencing token (from
--                     ${sequence}) and deadline by the SERVER's clock in UTC
--   ready_at          when the task may be captured: its registration (pending), its failure or release,
--                     or, while in progress, the claim's deadline (an expired claim is captured again)
--   payload           the payload (stored form as names, UTF-8), NULL for none
CREATE TABLE IF NOT EXISTS ${task_table} (
    queue            VARBINARY(1024) NOT NULL,
    task_id          VARBINARY(2048) NOT NULL,
    status           VARCHAR(12)     CHARACTER SET ascii NOT NULL,
    retries_left     INT             NOT NULL,
    attempts         INT             NOT NULL DEFAULT 0,
    claim_owner      VARBINARY(255)  NULL,
    claim_token      BIGINT          NULL,
    claim_expires_at DATETIME(6)     NULL,
    ready_at         DATETIME(6)     NOT NULL,
    payload          LONGBLOB        NULL,
    created_at       DATETIME(6)     NOT NULL,
    updated_at       DATETIME(6)     NOT NULL,
    PRIMARY KEY (queue, task_id),
    KEY ${ready_index} (queue, ready_at)
) ENGINE=InnoDB;
