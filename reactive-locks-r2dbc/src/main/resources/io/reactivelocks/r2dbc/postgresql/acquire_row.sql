-- One attempt to take a lock whose row exists (the client saw it lately), in ONE statement: the
-- hot path, a single-row UPDATE (a HOT update: no indexed column changes).
--   $1 name (stored form)  $2 owner (stored form)  $3 TTL in microseconds  $4 notification channel
--   $5 the notification payload after the token: "<owner length> <owner><name>" (built by the client)
--   $6 the lock payload to store with a new grant (stored form), or NULL for none
-- Granted when the row is free by the server's clock (released, expired, or a watcher's
-- placeholder) or already this owner's (a retried request: the same token, a fresh TTL). No row
-- comes back when the lock is busy or the row is gone: the client then asks with acquire.sql,
-- which inserts a missing row and answers who holds a busy one.
-- Token order: the token is drawn (nextval) while computing the row's new version; when another
-- transaction changed the row since this statement's snapshot, PostgreSQL waits for it and
-- evaluates the statement again on the latest version (EvalPlanQual), drawing again. So along
-- the row's versions tokens only grow. Rows are only deleted by purge.sql, under the name's
-- advisory lock that acquire.sql's insert holds from its draw to its commit.
-- The grant is announced only while a client OBSERVES the name: the row's watched_until (set by
-- ${watch_fn} under the same row lock for every waiter or observer) says someone listens, and
-- ${notify_fn} then checks for an observer's key (\o and the name; waiters need releases only,
-- and a NOTIFY serializes the commit). None of this on the uncontended path.
UPDATE ${table} AS l
SET owner      = $2,
    token      = CASE WHEN l.owner = $2 THEN l.token ELSE nextval('${sequence}') END,
    expires_at = now() + $3::bigint * interval '1 microsecond',
    payload    = CASE WHEN l.owner = $2 THEN l.payload ELSE $6::text END
WHERE l.name = $1 AND (l.owner = $2 OR l.expires_at <= now())
RETURNING true AS granted, l.token, NULL::text AS owner, NULL::bigint AS remaining_us, NULL::text AS payload,
          CASE WHEN l.watched_until > now() THEN ${notify_fn}($4, '\o' || $1, 'A ' || l.token || ' ' || $5) ELSE false END AS sent
