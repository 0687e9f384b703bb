-- Who listens for which name: a NOTIFY is sent only when a live row for the name's key exists, so
-- an uncontended acquire + release sends none (PostgreSQL serializes the commits of all
-- transactions that executed NOTIFY: one heavyweight lock in PreCommit_Notify).
--   key         the listener's dispatch key: the stored lock name, or \s / \w and the stored name
--               of a semaphore / read-write lock
--   listener    the random id of the watching client (one per PostgresLockBackend)
--   expires_at  when the row stops counting unless the client renews it (with its listening
--               connection's health check), by the SERVER's clock: a crashed client's rows stop
--               causing notifications when they expire, and are then swept by any client
CREATE TABLE IF NOT EXISTS ${watcher_table} (
    key        text        NOT NULL,
    listener   text        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT ${watcher_pkey} PRIMARY KEY (key, listener)
);

-- Sends p_payload on p_channel if a client watches p_key; called by every statement that changes
-- a lock, permit or grant, once per changed row, AFTER the change. Why no wake-up is lost: a
-- client registers a key (${watch_fn}) holding this key's advisory lock EXCLUSIVELY and only then
-- lets its waiters re-check; this function takes it SHARED (held to commit) and only then reads
-- the watchers with a fresh snapshot (a VOLATILE plpgsql function in READ COMMITTED). So either
-- the registration committed first and the change is notified, or the change committed before the
-- registration did, and the waiters' re-check sees it.
CREATE OR REPLACE FUNCTION ${notify_fn}(p_channel text, p_key text, p_payload text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(p_key, 7305467431562270023));
    IF EXISTS (SELECT 1 FROM ${watcher_table} w WHERE w.key = p_key AND w.expires_at > now()) THEN
        PERFORM pg_notify(p_channel, p_payload);
        RETURN true;
    END IF;
    RETURN false;
END
$fn$;

-- Registers or renews the keys a client watches, until now() + p_ttl_us; returns the keys that
-- had no live row of this client (new or lapsed: their waiters must re-check). A new row is
-- written under the key's advisory lock taken EXCLUSIVELY (see ${notify_fn}), one key after the
-- other in sorted order, the observer keys (\o and the stored lock name) after all others: a
-- lock's grant takes the lock row first and then the observer key's advisory lock (in
-- ${notify_fn}), so a registration must take them in the same order (the name's row, written for
-- its plain key, before the observer key's lock), or the two would wait for each other.
-- Sweeps expired rows of any client first (without waiting for locks).
CREATE OR REPLACE FUNCTION ${watch_fn}(p_keys text[], p_listener text, p_ttl_us bigint)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_key text;
BEGIN
    DELETE FROM ${watcher_table} w
    WHERE (w.key, w.listener) IN (SELECT x.key, x.listener FROM ${watcher_table} x
                                  WHERE x.expires_at <= now() FOR UPDATE SKIP LOCKED);
    FOR v_key IN SELECT u.k FROM (SELECT DISTINCT x.k FROM unnest(p_keys) AS x(k)) AS u ORDER BY left(u.k, 2) = '\o', u.k LOOP
        UPDATE ${watcher_table} w SET expires_at = now() + p_ttl_us * interval '1 microsecond'
            WHERE w.key = v_key AND w.listener = p_listener AND w.expires_at > now();
        IF NOT FOUND THEN
            PERFORM pg_advisory_xact_lock(hashtextextended(v_key, 7305467431562270023));
            INSERT INTO ${watcher_table} AS w (key, listener, expires_at)
                VALUES (v_key, p_listener, now() + p_ttl_us * interval '1 microsecond')
                ON CONFLICT ON CONSTRAINT ${watcher_pkey} DO UPDATE SET expires_at = excluded.expires_at;
            RETURN NEXT v_key;
        END IF;
        -- A lock's grant and release (acquire.sql, release.sql) read the watch from the lock row
        -- itself: the row is updated here under its row lock, so a grant or release either runs
        -- after this committed and notifies, or committed before it and the waiters' re-check sees
        -- it. A name without a row gets a free placeholder row (token 0, never a grant's token).
        -- Keys of the other concepts start with a backslash and a letter (semaphore, read-write
        -- lock, task queue; a lock's observers), which no stored lock name does.
        IF left(v_key, 2) NOT IN ('\s', '\w', '\q', '\o') THEN
            INSERT INTO ${table} AS l (name, owner, token, expires_at, watched_until)
                VALUES (v_key, '', 0, '-infinity', now() + p_ttl_us * interval '1 microsecond')
                ON CONFLICT (name) DO UPDATE SET watched_until = GREATEST(l.watched_until, excluded.watched_until);
        END IF;
        -- A semaphore's and a read-write lock's release read the watch from their row as well: its rows are
        -- marked here, under their row locks; the rows granted from now on are marked by their grant, which reads
        -- the watchers under this key's lock (taken SHARED by the grant, EXCLUSIVELY above for a new row).
        -- Their tables exist once the concept was first used (and have the column once its script ran again).
        IF left(v_key, 2) = '\s' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('${watched_permit_table}') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE ${watched_permit_table} p SET watched_until = now() + p_ttl_us * interval '1 microsecond'
                WHERE p.name = substr(v_key, 3) AND p.watched_until < now() + p_ttl_us * interval '1 microsecond';
        ELSIF left(v_key, 2) = '\w' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('${watched_rw_table}') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE ${watched_rw_table} g SET watched_until = now() + p_ttl_us * interval '1 microsecond'
                WHERE g.name = substr(v_key, 3) AND g.watched_until < now() + p_ttl_us * interval '1 microsecond';
        END IF;
    END LOOP;
END
$fn$;
-- The version of the watching protocol, read by the check on first use (schema_check.sql): a schema whose
-- ${watch_fn} predates the observer keys (which it must take after the name's keys) is not ready, so the
-- first use of a newer client runs this script again and replaces the functions.
COMMENT ON FUNCTION ${watch_fn}(text[], text, bigint) IS 'reactive-locks watchers 3: observer keys last, grant rows marked';

-- Deletes a client's rows of the keys p_keys (nobody there waits for them any more) and lowers the
-- watch of the lock rows among them to the end of the other clients' live rows ('-infinity' when
-- none is left): from then on their grants and releases notify nobody. Each key under its
-- advisory lock taken EXCLUSIVELY, like a registration, and read after it (a fresh snapshot per
-- statement): a registration of another client either committed before (and is counted) or
-- comes after (and raises the watch again). In the order of ${watch_fn} (observer keys last).
CREATE OR REPLACE FUNCTION ${unwatch_fn}(p_keys text[], p_listener text)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_key text;
    n integer := 0;
BEGIN
    FOR v_key IN SELECT u.k FROM (SELECT DISTINCT x.k FROM unnest(p_keys) AS x(k)) AS u ORDER BY left(u.k, 2) = '\o', u.k LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_key, 7305467431562270023));
        DELETE FROM ${watcher_table} w WHERE w.key = v_key AND w.listener = p_listener;
        IF FOUND THEN
            n := n + 1;
        END IF;
        IF left(v_key, 2) NOT IN ('\s', '\w', '\q', '\o') THEN
            UPDATE ${table} l
            SET watched_until = COALESCE((SELECT max(w.expires_at) FROM ${watcher_table} w
                                          WHERE w.key = v_key AND w.expires_at > now()), '-infinity')
            WHERE l.name = v_key AND l.watched_until > now();
        ELSIF left(v_key, 2) = '\s' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('${watched_permit_table}') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE ${watched_permit_table} p
            SET watched_until = COALESCE((SELECT max(w.expires_at) FROM ${watcher_table} w
                                          WHERE w.key = v_key AND w.expires_at > now()), '-infinity')
            WHERE p.name = substr(v_key, 3) AND p.watched_until > now();
        ELSIF left(v_key, 2) = '\w' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('${watched_rw_table}') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE ${watched_rw_table} g
            SET watched_until = COALESCE((SELECT max(w.expires_at) FROM ${watcher_table} w
                                          WHERE w.key = v_key AND w.expires_at > now()), '-infinity')
            WHERE g.name = substr(v_key, 3) AND g.watched_until > now();
        END IF;
    END LOOP;
    RETURN n;
END
$fn$;
