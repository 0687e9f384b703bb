-- reactive-locks: the task table of the PostgreSQL task queue (a session's taskQueue, PostgresTaskStore).
-- Idempotent: run by PostgresTaskQueue.migrate() (and on first use unless disabled) as ONE simple
-- query, i.e. one implicit transaction. Placeholders are validated identifiers, double-quoted:
--   ${schema}            the schema                   (default "public")
--   ${schema_name}       the same, unquoted, for the catalog lookup below
--   ${sequence}          the fencing-token sequence, shared with the locks (default "public"."reactive_locks_token_seq")
--   ${task_table}        the task table               (default "public"."reactive_lock_tasks")
--   ${task_pkey}         its primary key constraint
--   ${task_ready_index}  its capture index

-- Serialized with the lock schema's migration (same transaction-scoped advisory lock).
SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${schema_name}') THEN
        CREATE SCHEMA ${schema};
    END IF;
END
$$;

-- Claim tokens come from the lock sequence: durable, never repeating, never going back.
CREATE SEQUENCE IF NOT EXISTS ${sequence} AS bigint NO CYCLE;

-- One row per task of a queue.
--   queue, task_id    stored form (NUL, lone surrogates and '\' escaped, see TextEscapes.java)
--   status            pending: capturable (registered or released)
--                     in_progress: claimed until claim_expires_at; capturable again once that passed
--                     failed: capturable, a retry was used
--                     done, dead (failed with no retry left): never captured again, kept visible
--   retries_left      failures that will still be retried (a failure with none left is dead)
--   attempts          how many times the task was captured
--   claim_owner       the owner id of the last capture (one per capture statement)
--   claim_token       its fencing token, from ${sequence}: greater than that of every earlier capture
--   claim_expires_at  while in_progress: when the claim ends, by the SERVER's clock; else NULL
--   ready_at          the capture order: when the task became capturable (registration, failure,
--                     release) or, while in_progress, when its claim expires (= claim_expires_at)
--   payload           optional text for the worker (stored form, like the ids)
CREATE TABLE IF NOT EXISTS ${task_table} (
    queue            text        NOT NULL,
    task_id          text        NOT NULL,
    status           text        NOT NULL,
    retries_left     integer     NOT NULL,
    attempts         integer     NOT NULL DEFAULT 0,
    claim_owner      text,
    claim_token      bigint,
    claim_expires_at timestamptz,
    ready_at         timestamptz NOT NULL,
    payload          text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ${task_pkey} PRIMARY KEY (queue, task_id),
    CHECK (status IN ('pending', 'in_progress', 'done', 'failed', 'dead')),
    CHECK (retries_left >= 0),
    CHECK (status <> 'in_progress' OR (claim_owner IS NOT NULL AND claim_token IS NOT NULL
                                       AND claim_expires_at IS NOT NULL AND ready_at = claim_expires_at))
);

-- Capture: an ordered range scan of one queue's live tasks (done and dead ones are not in it).
CREATE INDEX IF NOT EXISTS ${task_ready_index} ON ${task_table} (queue, ready_at)
    WHERE status IN ('pending', 'failed', 'in_progress');
