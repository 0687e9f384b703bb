-- Captures up to $2 tasks of a queue in ONE statement (one implicit transaction):
--   $1 queue (stored form)  $2 the most tasks to capture (the subscriber's outstanding demand)
--   $3 owner (stored form, fresh for every capture statement)  $4 claim time in microseconds
-- Capturable: pending and failed tasks, and in_progress tasks whose claim has expired by the
-- server's clock — so a claim whose worker vanished is taken again without any sweeper process.
-- Why two concurrent captures never capture the same task:
--  * `picked` locks each row it returns (FOR UPDATE). A row another transaction has locked — a
--    concurrent capture, or a complete/fail/release/renew in flight — is skipped, not waited for
--    (SKIP LOCKED), so capturers never queue behind each other.
--  * Under READ COMMITTED, a row that was changed by a transaction that committed after this
--    statement's snapshot is re-checked on its latest version once locked: a task another capture
--    has just taken is now in_progress with a future expiry, fails the WHERE, and is dropped.
--  * `picked` is MATERIALIZED: it runs once, and the UPDATE changes exactly the rows it locked
--    (nobody else can change them before this transaction commits). LIMIT bounds them by $2.
-- Tokens: nextval is drawn while the row is locked, after the previous capture of the task
-- committed, so every capture of a task gets a greater token than all earlier ones.
-- Order: by ready_at (roughly FIFO: registration, failure or release time; an expired claim by its
-- expiry), served by the partial index on (queue, ready_at) of live tasks.
-- The last row ('h') is a hint for an idle capturer: in how many microseconds the earliest live
-- claim of the queue expires (NULL: none, or this statement captured all it asked for). While
-- in_progress, ready_at equals claim_expires_at (a CHECK constraint), so it is a range of the index.
WITH picked AS MATERIALIZED (
    SELECT t.queue, t.task_id
    FROM ${task_table} t
    WHERE t.queue = $1
      AND t.status IN ('pending', 'failed', 'in_progress')
      AND (t.status <> 'in_progress' OR t.claim_expires_at <= now())
    ORDER BY t.ready_at
    LIMIT $2::integer
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE ${task_table} t
    SET status           = 'in_progress',
        claim_owner      = $3,
        claim_token      = nextval('${sequence}'),
        claim_expires_at = now() + $4::bigint * interval '1 microsecond',
        ready_at         = now() + $4::bigint * interval '1 microsecond',
        attempts         = t.attempts + 1,
        updated_at       = now()
    FROM picked p
    WHERE t.queue = p.queue AND t.task_id = p.task_id
    RETURNING t.task_id, t.claim_token, t.retries_left, t.attempts, t.payload
)
SELECT 'c' AS kind, c.task_id, c.claim_token AS token, c.retries_left, c.attempts, c.payload,
       NULL::bigint AS next_expiry_us
FROM claimed c
UNION ALL
SELECT 'h', NULL, NULL, NULL, NULL, NULL,
       ceil(extract(epoch FROM min(h.ready_at) - now()) * 1000000)::bigint
FROM ${task_table} h
WHERE h.queue = $1 AND h.status = 'in_progress' AND h.ready_at > now()
  AND (SELECT count(*) FROM claimed) < $2::integer
