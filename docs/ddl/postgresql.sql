-- reactive-locks: the whole PostgreSQL schema (locks, window locks, fair locks, semaphores,
-- read-write locks, task queue, fenced values) with the default names: schema public, lock
-- table reactive_locks (the other tables' names derive from it), sequence
-- reactive_locks_token_seq, window table reactive_lock_windows, task table reactive_lock_tasks.
--
-- For databases where the application's role may not create objects. Run it as a role that
-- may (idempotent; safe to run again after an upgrade):
--   psql -v ON_ERROR_STOP=1 -d app -f postgresql.sql
-- give the application's role the data privileges:
--   GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app;
--   GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO app;
-- and run the application with PostgresLockOptions.schemaMode(SchemaMode.VALIDATE)
-- (Spring Boot: reactive-locks.postgres.schema-mode=validate).
--
-- GENERATED from the SQL templates in reactive-locks-r2dbc/src/main/resources/io/reactivelocks/r2dbc/postgresql;
-- do not edit. Regenerate with:
--   ./mvnw -B -ntp -o -q -pl reactive-locks-r2dbc -am verify -Dtest=PostgresDdlFileTest -Dsurefire.failIfNoSpecifiedTests=false -Djacoco.skip=true -Dreactive-locks.ddl.write=true

-- ================================================================================================
-- lock
-- ================================================================================================

-- Concurrent CREATE ... IF NOT EXISTS can still collide in the catalogs: serialize migrations.
-- A transaction-scoped advisory lock (released at commit) is safe on pooled connections.
SELECT pg_advisory_xact_lock(7305467431562270021);

-- CREATE SCHEMA IF NOT EXISTS would demand the CREATE privilege on the database even when the
-- schema exists; only create it when it is missing.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
        CREATE SCHEMA "public";
    END IF;
END
$$;

-- Fencing tokens: one durable, monotonic sequence (shared by locks and window claims). Tokens
-- may skip values (a takeover draws twice, rolled-back draws are lost); they never repeat or go
-- back, including across server restarts (sequences are WAL-logged).
CREATE SEQUENCE IF NOT EXISTS "public"."reactive_locks_token_seq" AS bigint NO CYCLE;

-- One row per held (or expired, not yet taken over or released) lock.
--   name        the lock name (stored form: NUL, lone surrogates and '\' escaped, see TextEscapes.java)
--   owner       the holder's random owner id (same stored form)
--   token       the fencing token of the grant, from "public"."reactive_locks_token_seq"
--   expires_at  when the lease ends, by the SERVER's clock (now() + TTL at grant/renewal)
--   payload     the holder's payload (at most 4096 UTF-8 bytes, stored form as names), NULL for none
--   watched_until  until when a client watches the name ("public"."reactive_locks_watch" sets it, with the watchers
--               table's row): a grant or release of the row notifies only while it is in the future
-- A release does not delete the row: it clears the owner (''), so the next grant of the name is
-- one UPDATE of the same row, a HOT update (no indexed column changes: no index on expires_at).
-- Free rows (released, expired, or a watcher's placeholder with token 0) are deleted by
-- PostgresLockBackend.purgeExpired, which each backend also runs every 10 minutes.
CREATE TABLE IF NOT EXISTS "public"."reactive_locks" (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    payload    text,
    watched_until timestamptz NOT NULL DEFAULT '-infinity',
    CONSTRAINT "reactive_locks_pkey" PRIMARY KEY (name)
);

-- Tables created by older versions get the columns (catalog-only changes, no rewrite).
ALTER TABLE "public"."reactive_locks" ADD COLUMN IF NOT EXISTS payload text;
ALTER TABLE "public"."reactive_locks" ADD COLUMN IF NOT EXISTS watched_until timestamptz NOT NULL DEFAULT '-infinity';

-- Older versions indexed expires_at: every grant and release then wrote both indexes; without it
-- they are HOT updates. The purge scans the table (one row per name in use).
DROP INDEX IF EXISTS "public"."reactive_locks_expires_at_idx";

-- Window locks ("run once per period across the fleet"): one row per name and period, holding
-- the last claimed window number floor(server epoch / period).
CREATE TABLE IF NOT EXISTS "public"."reactive_lock_windows" (
    name       text        NOT NULL,
    period_us  bigint      NOT NULL,
    window_no  bigint      NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    claimed_at timestamptz NOT NULL,
    CONSTRAINT "reactive_lock_windows_pkey" PRIMARY KEY (name, period_us)
);

-- Who listens for which name: a NOTIFY is sent only when a live row for the name's key exists, so
-- an uncontended acquire + release sends none (PostgreSQL serializes the commits of all
-- transactions that executed NOTIFY: one heavyweight lock in PreCommit_Notify).
--   key         the listener's dispatch key: the stored lock name, or \s / \w and the stored name
--               of a semaphore / read-write lock
--   listener    the random id of the watching client (one per PostgresLockBackend)
--   expires_at  when the row stops counting unless the client renews it (with its listening
--               connection's health check), by the SERVER's clock: a crashed client's rows stop
--               causing notifications when they expire, and are then swept by any client
CREATE TABLE IF NOT EXISTS "public"."reactive_locks_watchers" (
    key        text        NOT NULL,
    listener   text        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT "reactive_locks_watchers_pkey" PRIMARY KEY (key, listener)
);

-- Sends p_payload on p_channel if a client watches p_key; called by every statement that changes
-- a lock, permit or grant, once per changed row, AFTER the change. Why no wake-up is lost: a
-- client registers a key ("public"."reactive_locks_watch") holding this key's advisory lock EXCLUSIVELY and only then
-- lets its waiters re-check; this function takes it SHARED (held to commit) and only then reads
-- the watchers with a fresh snapshot (a VOLATILE plpgsql function in READ COMMITTED). So either
-- the registration committed first and the change is notified, or the change committed before the
-- registration did, and the waiters' re-check sees it.
CREATE OR REPLACE FUNCTION "public"."reactive_locks_notify"(p_channel text, p_key text, p_payload text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended(p_key, 7305467431562270023));
    IF EXISTS (SELECT 1 FROM "public"."reactive_locks_watchers" w WHERE w.key = p_key AND w.expires_at > now()) THEN
        PERFORM pg_notify(p_channel, p_payload);
        RETURN true;
    END IF;
    RETURN false;
END
$fn$;

-- Registers or renews the keys a client watches, until now() + p_ttl_us; returns the keys that
-- had no live row of this client (new or lapsed: their waiters must re-check). A new row is
-- written under the key's advisory lock taken EXCLUSIVELY (see "public"."reactive_locks_notify"), one key after the
-- other in sorted order, the observer keys (\o and the stored lock name) after all others: a
-- lock's grant takes the lock row first and then the observer key's advisory lock (in
-- "public"."reactive_locks_notify"), so a registration must take them in the same order (the name's row, written for
-- its plain key, before the observer key's lock), or the two would wait for each other.
-- Sweeps expired rows of any client first (without waiting for locks).
CREATE OR REPLACE FUNCTION "public"."reactive_locks_watch"(p_keys text[], p_listener text, p_ttl_us bigint)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_key text;
BEGIN
    DELETE FROM "public"."reactive_locks_watchers" w
    WHERE (w.key, w.listener) IN (SELECT x.key, x.listener FROM "public"."reactive_locks_watchers" x
                                  WHERE x.expires_at <= now() FOR UPDATE SKIP LOCKED);
    FOR v_key IN SELECT u.k FROM (SELECT DISTINCT x.k FROM unnest(p_keys) AS x(k)) AS u ORDER BY left(u.k, 2) = '\o', u.k LOOP
        UPDATE "public"."reactive_locks_watchers" w SET expires_at = now() + p_ttl_us * interval '1 microsecond'
            WHERE w.key = v_key AND w.listener = p_listener AND w.expires_at > now();
        IF NOT FOUND THEN
            PERFORM pg_advisory_xact_lock(hashtextextended(v_key, 7305467431562270023));
            INSERT INTO "public"."reactive_locks_watchers" AS w (key, listener, expires_at)
                VALUES (v_key, p_listener, now() + p_ttl_us * interval '1 microsecond')
                ON CONFLICT ON CONSTRAINT "reactive_locks_watchers_pkey" DO UPDATE SET expires_at = excluded.expires_at;
            RETURN NEXT v_key;
        END IF;
        -- A lock's grant and release (acquire.sql, release.sql) read the watch from the lock row
        -- itself: the row is updated here under its row lock, so a grant or release either runs
        -- after this committed and notifies, or committed before it and the waiters' re-check sees
        -- it. A name without a row gets a free placeholder row (token 0, never a grant's token).
        -- Keys of the other concepts start with a backslash and a letter (semaphore, read-write
        -- lock, task queue; a lock's observers), which no stored lock name does.
        IF left(v_key, 2) NOT IN ('\s', '\w', '\q', '\o') THEN
            INSERT INTO "public"."reactive_locks" AS l (name, owner, token, expires_at, watched_until)
                VALUES (v_key, '', 0, '-infinity', now() + p_ttl_us * interval '1 microsecond')
                ON CONFLICT (name) DO UPDATE SET watched_until = GREATEST(l.watched_until, excluded.watched_until);
        END IF;
        -- A semaphore's and a read-write lock's release read the watch from their row as well: its rows are
        -- marked here, under their row locks; the rows granted from now on are marked by their grant, which reads
        -- the watchers under this key's lock (taken SHARED by the grant, EXCLUSIVELY above for a new row).
        -- Their tables exist once the concept was first used (and have the column once its script ran again).
        IF left(v_key, 2) = '\s' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('"public"."reactive_locks_permits"') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE "public"."reactive_locks_permits" p SET watched_until = now() + p_ttl_us * interval '1 microsecond'
                WHERE p.name = substr(v_key, 3) AND p.watched_until < now() + p_ttl_us * interval '1 microsecond';
        ELSIF left(v_key, 2) = '\w' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('"public"."reactive_locks_rw"') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE "public"."reactive_locks_rw" g SET watched_until = now() + p_ttl_us * interval '1 microsecond'
                WHERE g.name = substr(v_key, 3) AND g.watched_until < now() + p_ttl_us * interval '1 microsecond';
        END IF;
    END LOOP;
END
$fn$;
-- The version of the watching protocol, read by the check on first use (schema_check.sql): a schema whose
-- "public"."reactive_locks_watch" predates the observer keys (which it must take after the name's keys) is not ready, so the
-- first use of a newer client runs this script again and replaces the functions.
COMMENT ON FUNCTION "public"."reactive_locks_watch"(text[], text, bigint) IS 'reactive-locks watchers 3: observer keys last, grant rows marked';

-- Deletes a client's rows of the keys p_keys (nobody there waits for them any more) and lowers the
-- watch of the lock rows among them to the end of the other clients' live rows ('-infinity' when
-- none is left): from then on their grants and releases notify nobody. Each key under its
-- advisory lock taken EXCLUSIVELY, like a registration, and read after it (a fresh snapshot per
-- statement): a registration of another client either committed before (and is counted) or
-- comes after (and raises the watch again). In the order of "public"."reactive_locks_watch" (observer keys last).
CREATE OR REPLACE FUNCTION "public"."reactive_locks_unwatch"(p_keys text[], p_listener text)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_key text;
    n integer := 0;
BEGIN
    FOR v_key IN SELECT u.k FROM (SELECT DISTINCT x.k FROM unnest(p_keys) AS x(k)) AS u ORDER BY left(u.k, 2) = '\o', u.k LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_key, 7305467431562270023));
        DELETE FROM "public"."reactive_locks_watchers" w WHERE w.key = v_key AND w.listener = p_listener;
        IF FOUND THEN
            n := n + 1;
        END IF;
        IF left(v_key, 2) NOT IN ('\s', '\w', '\q', '\o') THEN
            UPDATE "public"."reactive_locks" l
            SET watched_until = COALESCE((SELECT max(w.expires_at) FROM "public"."reactive_locks_watchers" w
                                          WHERE w.key = v_key AND w.expires_at > now()), '-infinity')
            WHERE l.name = v_key AND l.watched_until > now();
        ELSIF left(v_key, 2) = '\s' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('"public"."reactive_locks_permits"') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE "public"."reactive_locks_permits" p
            SET watched_until = COALESCE((SELECT max(w.expires_at) FROM "public"."reactive_locks_watchers" w
                                          WHERE w.key = v_key AND w.expires_at > now()), '-infinity')
            WHERE p.name = substr(v_key, 3) AND p.watched_until > now();
        ELSIF left(v_key, 2) = '\w' AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = to_regclass('"public"."reactive_locks_rw"') AND a.attname = 'watched_until' AND NOT a.attisdropped) THEN
            UPDATE "public"."reactive_locks_rw" g
            SET watched_until = COALESCE((SELECT max(w.expires_at) FROM "public"."reactive_locks_watchers" w
                                          WHERE w.key = v_key AND w.expires_at > now()), '-infinity')
            WHERE g.name = substr(v_key, 3) AND g.watched_until > now();
        END IF;
    END LOOP;
    RETURN n;
END
$fn$;

-- ================================================================================================
-- fair lock
-- ================================================================================================

SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
        CREATE SCHEMA "public";
    END IF;
END
$$;

CREATE SEQUENCE IF NOT EXISTS "public"."reactive_locks_token_seq" AS bigint NO CYCLE;

-- One row per waiting owner of a fair lock (or expired and not yet removed):
--   name        the lock name (stored form)
--   owner       the waiter's owner id (stored form)
--   seq         its place in line, from "public"."reactive_locks_token_seq" at its first arrival
--   expires_at  when the entry ends unless the waiter asks again, by the SERVER's clock
CREATE TABLE IF NOT EXISTS "public"."reactive_locks_waiters" (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    seq        bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT "reactive_locks_waiters_pkey" PRIMARY KEY (name, owner)
);

CREATE INDEX IF NOT EXISTS "reactive_locks_waiters_seq_idx" ON "public"."reactive_locks_waiters" (name, seq);

-- Versions before the rank (r_ahead) returned fewer columns: CREATE OR REPLACE cannot change that.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_proc p
               WHERE p.oid = to_regprocedure('"public"."reactive_locks_waiters_grant"(text,text,bigint,boolean,bigint,text,text,text)')
                 AND NOT ('r_ahead' = ANY (p.proargnames))) THEN
        DROP FUNCTION "public"."reactive_locks_waiters_grant"(text, text, bigint, boolean, bigint, text, text, text);
    END IF;
END
$$;

-- One attempt at a fair lock. Serialized per name by the same transaction-scoped advisory lock as
-- the mutex's acquire.sql (so the token order holds across both). Drops expired waiters; the
-- holder asking again gets its token back with a fresh TTL; a live holder or an earlier waiter
-- makes a try (p_wait false) busy and a wait enqueue (or refresh) the owner; otherwise the owner
-- takes the lock row with a token from "public"."reactive_locks_token_seq" and leaves the line. Returns one row:
--   r_kind 1 granted (r_token), 0 busy (the holder, or r_remaining_us -1 when free but waiters
--   are in line), 2 queued (r_remaining_us: µs until the holder's TTL or the head waiter's
--   deadline passes, when something may change without a notification; r_ahead: how many waiters are
--   in line before the caller, so that a release wakes only the waiter it made head, see
--   io.reactivelocks.spi.WaiterLine). The grant is announced only when a client watches the name.
CREATE OR REPLACE FUNCTION "public"."reactive_locks_waiters_grant"(p_name text, p_owner text, p_ttl_us bigint, p_wait boolean,
                                       p_waiter_ttl_us bigint, p_payload text, p_channel text, p_suffix text)
RETURNS TABLE (r_kind integer, r_token bigint, r_owner text, r_remaining_us bigint, r_payload text, r_ahead bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    h record;
    w record;
    t bigint;
    v_seq bigint;
    v_watched boolean;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_name, 7305467431562270022));
    DELETE FROM "public"."reactive_locks_waiters" x WHERE x.name = p_name AND x.expires_at <= now();
    SELECT l.owner, l.token, l.expires_at, l.payload INTO h FROM "public"."reactive_locks" l WHERE l.name = p_name;
    IF FOUND AND h.owner = p_owner THEN
        UPDATE "public"."reactive_locks" l SET expires_at = now() + p_ttl_us * interval '1 microsecond' WHERE l.name = p_name;
        DELETE FROM "public"."reactive_locks_waiters" x WHERE x.name = p_name AND x.owner = p_owner;
        RETURN QUERY SELECT 1, h.token, NULL::text, NULL::bigint, NULL::text, NULL::bigint;
        RETURN;
    END IF;
    IF FOUND AND h.expires_at > now() THEN
        IF NOT p_wait THEN
            RETURN QUERY SELECT 0, h.token, h.owner,
                GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, h.payload, NULL::bigint;
            RETURN;
        END IF;
        INSERT INTO "public"."reactive_locks_waiters" AS x (name, owner, seq, expires_at)
            VALUES (p_name, p_owner, nextval('"public"."reactive_locks_token_seq"'), now() + p_waiter_ttl_us * interval '1 microsecond')
            ON CONFLICT ON CONSTRAINT "reactive_locks_waiters_pkey" DO UPDATE SET expires_at = excluded.expires_at
            RETURNING x.seq INTO v_seq;
        RETURN QUERY SELECT 2, 0::bigint, NULL::text,
            GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, NULL::text,
            (SELECT count(*) FROM "public"."reactive_locks_waiters" x WHERE x.name = p_name AND x.seq < v_seq);
        RETURN;
    END IF;
    SELECT x.owner, x.expires_at INTO w FROM "public"."reactive_locks_waiters" x WHERE x.name = p_name ORDER BY x.seq LIMIT 1;
    IF FOUND AND w.owner <> p_owner THEN
        IF NOT p_wait THEN
            RETURN QUERY SELECT 0, 0::bigint, NULL::text, -1::bigint, NULL::text, NULL::bigint;
            RETURN;
        END IF;
        INSERT INTO "public"."reactive_locks_waiters" AS x (name, owner, seq, expires_at)
            VALUES (p_name, p_owner, nextval('"public"."reactive_locks_token_seq"'), now() + p_waiter_ttl_us * interval '1 microsecond')
            ON CONFLICT ON CONSTRAINT "reactive_locks_waiters_pkey" DO UPDATE SET expires_at = excluded.expires_at
            RETURNING x.seq INTO v_seq;
        RETURN QUERY SELECT 2, 0::bigint, NULL::text,
            GREATEST(0, floor(extract(epoch FROM w.expires_at - now()) * 1000000))::bigint, NULL::text,
            (SELECT count(*) FROM "public"."reactive_locks_waiters" x WHERE x.name = p_name AND x.seq < v_seq);
        RETURN;
    END IF;
    -- The row may have been taken since the read above by a plain lock grant of the same name
    -- (acquire_row.sql takes no advisory lock): take it only if still free, with a token drawn
    -- under its row lock (the insert's draw is under the name's advisory lock, see acquire.sql).
    INSERT INTO "public"."reactive_locks" AS l (name, owner, token, expires_at, payload)
        VALUES (p_name, p_owner, nextval('"public"."reactive_locks_token_seq"'), now() + p_ttl_us * interval '1 microsecond', p_payload)
        ON CONFLICT (name) DO UPDATE
            SET owner = excluded.owner, token = nextval('"public"."reactive_locks_token_seq"'), expires_at = excluded.expires_at,
                payload = excluded.payload
            WHERE l.expires_at <= now()
        RETURNING l.token, l.watched_until > now() INTO t, v_watched;
    IF t IS NULL THEN
        SELECT l.owner, l.token, l.expires_at, l.payload INTO h FROM "public"."reactive_locks" l WHERE l.name = p_name;
        RETURN QUERY SELECT 0, h.token, h.owner,
            GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, h.payload, NULL::bigint;
        RETURN;
    END IF;
    DELETE FROM "public"."reactive_locks_waiters" x WHERE x.name = p_name AND x.owner = p_owner;
    -- announced while a client watches the name: the row's watched_until, read under its row lock (asking
    -- "public"."reactive_locks_notify" for the name's advisory lock after the row's deadlocked with a watch of the name)
    IF v_watched THEN
        PERFORM pg_notify(p_channel, 'A ' || t || ' ' || p_suffix);
    END IF;
    RETURN QUERY SELECT 1, t, NULL::text, NULL::bigint, NULL::text, NULL::bigint;
END
$fn$;

-- ================================================================================================
-- semaphore
-- ================================================================================================

SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
        CREATE SCHEMA "public";
    END IF;
END
$$;

CREATE SEQUENCE IF NOT EXISTS "public"."reactive_locks_token_seq" AS bigint NO CYCLE;

-- One row per permit held (or expired and not yet removed):
--   name        the semaphore name (stored form: NUL, lone surrogates and '\' escaped, see LockNames)
--   owner       the permit's owner id (same stored form)
--   token       its fencing token, from "public"."reactive_locks_token_seq"
--   expires_at  when the permit ends, by the SERVER's clock
--   watched_until  until when a client waits for (or observes) the name's releases: the release sends a
--                  NOTIFY only before then (set by the grant from the watchers table, and kept by "public"."reactive_locks_watch"
--                  and "public"."reactive_locks_unwatch" under the row lock, as the lock table's column)
CREATE TABLE IF NOT EXISTS "public"."reactive_locks_permits" (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    watched_until timestamptz NOT NULL DEFAULT '-infinity',
    CONSTRAINT "reactive_locks_permits_pkey" PRIMARY KEY (name, owner)
);

-- Tables created by older versions get the column (a catalog-only change, no rewrite).
ALTER TABLE "public"."reactive_locks_permits" ADD COLUMN IF NOT EXISTS watched_until timestamptz NOT NULL DEFAULT '-infinity';

-- Grants one permit to each of p_owners if the unexpired permits of p_name plus the new ones are
-- at most p_permits; else nothing. Serialized per name by a transaction-scoped advisory lock;
-- each statement after it reads a fresh snapshot (a VOLATILE plpgsql function in READ COMMITTED),
-- so the count sees every grant committed before the lock was ours. Owners that hold already (a
-- retried request) get their tokens back with a fresh TTL. Returns one row per owner
-- (granted, owner, token) or one row (false, NULL, 0, µs until the earliest permit expires).
-- An 'A' notification on p_channel with payload p_key tells observers of a grant (only while a client observes:
-- a live watcher row of \o and p_key).
CREATE OR REPLACE FUNCTION "public"."reactive_locks_permits_grant"(p_name text, p_owners text[], p_permits integer, p_ttl_us bigint,
                                       p_channel text, p_key text)
RETURNS TABLE (granted boolean, owner text, token bigint, wait_us bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    held integer;
    expired integer;
    mine boolean;
    watched timestamptz;
    observed boolean;
BEGIN
    -- the name's lock, then the name's watcher key and its observers' key SHARED, in that order (held to commit, as
    -- "public"."reactive_locks_notify" takes them; "public"."reactive_locks_watch" takes them EXCLUSIVELY in the same order to register a client): so a
    -- registration either committed first, and the read of the watchers below sees it, or comes after this grant
    -- committed, and its re-check sees the grant — and it marks the name's rows, this grant's included, as watched.
    -- Issue 30: the grant announces itself only to observers (waiters need the releases), and a release reads the
    -- watch from its row (semaphore_release.sql) instead of calling "public"."reactive_locks_notify": 8 nested statements per
    -- uncontended pair until stop 57, 4 now.
    PERFORM pg_advisory_xact_lock(hashtextextended('reactive-locks semaphore ' || p_name, 0)),
            pg_advisory_xact_lock_shared(hashtextextended(p_key, 7305467431562270023)),
            pg_advisory_xact_lock_shared(hashtextextended('\o' || p_key, 7305467431562270023));
    -- one read of the name's rows: the unexpired ones, the expired ones, and whether the first owner holds
    -- (a retried request); the expired rows are deleted only when there are any (issue 30: a name without
    -- permits costs the lock, this read and the insert — the DELETE, an EXISTS and a count before)
    SELECT count(*) FILTER (WHERE p.expires_at > now()), count(*) FILTER (WHERE p.expires_at <= now()),
           COALESCE(bool_or(p.owner = p_owners[1] AND p.expires_at > now()), false)
      INTO held, expired, mine
      FROM "public"."reactive_locks_permits" p WHERE p.name = p_name;
    IF expired > 0 THEN
        DELETE FROM "public"."reactive_locks_permits" p WHERE p.name = p_name AND p.expires_at <= now();
    END IF;
    IF mine THEN
        RETURN QUERY UPDATE "public"."reactive_locks_permits" p SET expires_at = now() + p_ttl_us * interval '1 microsecond'
            WHERE p.name = p_name AND p.owner = ANY (p_owners)
            RETURNING true, p.owner, p.token, 0::bigint;
        RETURN;
    END IF;
    IF held + cardinality(p_owners) > p_permits THEN
        RETURN QUERY SELECT false, NULL::text, 0::bigint,
            COALESCE((SELECT (extract(epoch FROM min(p.expires_at) - now()) * 1000000)::bigint
                      FROM "public"."reactive_locks_permits" p WHERE p.name = p_name), 0);
        RETURN;
    END IF;
    -- who listens, read under the keys' locks taken above: the new rows carry the waiters' watch (their
    -- release then notifies without asking), and an observer hears of the grant
    SELECT max(w.expires_at) FILTER (WHERE w.key = p_key), COALESCE(bool_or(w.key = '\o' || p_key), false)
      INTO watched, observed
      FROM "public"."reactive_locks_watchers" w WHERE w.key IN (p_key, '\o' || p_key) AND w.expires_at > now();
    RETURN QUERY INSERT INTO "public"."reactive_locks_permits" AS p (name, owner, token, expires_at, watched_until)
        SELECT p_name, o.owner, nextval('"public"."reactive_locks_token_seq"'), now() + p_ttl_us * interval '1 microsecond',
               COALESCE(watched, '-infinity')
        FROM unnest(p_owners) WITH ORDINALITY AS o(owner, i) ORDER BY o.i
        RETURNING true, p.owner, p.token, 0::bigint;
    IF observed THEN
        PERFORM pg_notify(p_channel, 'A 0 -1 ' || p_key);
    END IF;
END
$fn$;

-- ================================================================================================
-- read-write lock
-- ================================================================================================

SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
        CREATE SCHEMA "public";
    END IF;
END
$$;

CREATE SEQUENCE IF NOT EXISTS "public"."reactive_locks_token_seq" AS bigint NO CYCLE;

-- One row per grant held, or per writer waiting (or expired and not yet removed):
--   name        the lock name (stored form: NUL, lone surrogates and '\' escaped, see LockNames)
--   owner       the owner id (same stored form)
--   mode        'r' a reader, 'w' the writer, 'i' a waiting writer's intent (blocks new readers
--               under the writer-preferring policy until it expires or is released)
--   token       the grant's fencing token, from "public"."reactive_locks_token_seq"; 0 for an intent
--   expires_at  when the grant or intent ends, by the SERVER's clock
CREATE TABLE IF NOT EXISTS "public"."reactive_locks_rw" (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    mode       "char"      NOT NULL CHECK (mode IN ('r', 'w', 'i')),
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    watched_until timestamptz NOT NULL DEFAULT '-infinity',
    CONSTRAINT "reactive_locks_rw_pkey" PRIMARY KEY (name, owner)
);

-- Tables created by older versions get the column (a catalog-only change, no rewrite): until when a client
-- waits for (or observes) the name's releases, as the permits table's.
ALTER TABLE "public"."reactive_locks_rw" ADD COLUMN IF NOT EXISTS watched_until timestamptz NOT NULL DEFAULT '-infinity';

-- One attempt for a read ('r') or write ('w') grant of p_name. Serialized per name by a
-- transaction-scoped advisory lock; each statement after it reads a fresh snapshot (a VOLATILE
-- plpgsql function in READ COMMITTED). Expired rows are removed first. A reader is granted when no
-- writer holds and, if p_writer_pref, no intent exists; a writer when no one holds, else (if
-- p_writer_pref and p_waiting) its intent is inserted or refreshed for p_ttl_us. An owner that
-- holds already (a retried request) gets its token back with a fresh TTL. Tokens come from the sequence at grant
-- time, so a writer's exceeds every reader's before it and a reader's the last writer's. Returns
-- (true, token, 0) or (false, 0, µs until the first grant, or for a reader intent, expires).
-- An 'A' notification on p_channel with payload p_key tells observers of a grant (only while a client observes:
-- a live watcher row of \o and p_key).
CREATE OR REPLACE FUNCTION "public"."reactive_locks_rw_grant"(p_name text, p_owner text, p_mode "char", p_writer_pref boolean,
                                       p_waiting boolean, p_ttl_us bigint, p_channel text, p_key text)
RETURNS TABLE (granted boolean, token bigint, wait_us bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_until timestamptz := now() + p_ttl_us * interval '1 microsecond';
    v_token bigint;
    v_writer boolean;
    v_busy boolean;
    v_expired integer;
    v_mine boolean;
    v_intents boolean;
    v_holders boolean;
    v_own_row boolean;
    v_watched timestamptz;
    v_observed boolean;
BEGIN
    -- the name's lock, then the name's watcher key and its observers' key SHARED, in that order (held to commit, as
    -- "public"."reactive_locks_notify" takes them; "public"."reactive_locks_watch" takes them EXCLUSIVELY in the same order to register a client): so a
    -- registration either committed first, and the read of the watchers below sees it, or comes after this grant
    -- committed, and its re-check sees the grant — and it marks the name's rows, this grant's included, as watched.
    -- Issue 30: the grant announces itself only to observers (waiters need the releases), and a release reads the
    -- watch from its row (semaphore_release.sql) instead of calling "public"."reactive_locks_notify": 8 nested statements per
    -- uncontended pair until stop 57, 4 now.
    PERFORM pg_advisory_xact_lock(hashtextextended('reactive-locks rwlock ' || p_name, 0)),
            pg_advisory_xact_lock_shared(hashtextextended(p_key, 7305467431562270023)),
            pg_advisory_xact_lock_shared(hashtextextended('\o' || p_key, 7305467431562270023));
    -- one read of the name's rows says all the grant needs (issue 30: a name no one holds costs the lock, this read
    -- and the insert; before, a DELETE of expired rows, an UPDATE of our grant, two EXISTS and a DELETE of our row ran
    -- every time): expired rows (deleted only when there are some), whether this owner holds (a retried request),
    -- a writer, writers' intents, any holder, and an unexpired row of this owner (its intent) to replace
    SELECT count(*) FILTER (WHERE g.expires_at <= now()),
           COALESCE(bool_or(g.owner = p_owner AND g.mode <> 'i' AND g.expires_at > now()), false),
           COALESCE(bool_or(g.mode = 'w' AND g.expires_at > now()), false),
           COALESCE(bool_or(g.mode = 'i' AND g.expires_at > now()), false),
           COALESCE(bool_or(g.mode <> 'i' AND g.expires_at > now()), false),
           COALESCE(bool_or(g.owner = p_owner AND g.expires_at > now()), false)
      INTO v_expired, v_mine, v_writer, v_intents, v_holders, v_own_row
      FROM "public"."reactive_locks_rw" g WHERE g.name = p_name;
    IF v_expired > 0 THEN
        DELETE FROM "public"."reactive_locks_rw" g WHERE g.name = p_name AND g.expires_at <= now();
    END IF;
    IF v_mine THEN
        UPDATE "public"."reactive_locks_rw" g SET expires_at = v_until
            WHERE g.name = p_name AND g.owner = p_owner AND g.mode <> 'i'
            RETURNING g.token INTO v_token;
        RETURN QUERY SELECT true, v_token, 0::bigint;
        RETURN;
    END IF;
    IF p_mode = 'r' THEN
        v_busy := v_writer OR (p_writer_pref AND v_intents);
    ELSE
        v_busy := v_holders;
    END IF;
    IF v_busy THEN
        IF p_mode = 'w' AND p_writer_pref AND p_waiting THEN
            -- the intent's release wakes readers: it carries the waiters' watch too
            INSERT INTO "public"."reactive_locks_rw" AS g (name, owner, mode, token, expires_at, watched_until)
                VALUES (p_name, p_owner, 'i', 0, v_until,
                        COALESCE((SELECT max(w.expires_at) FROM "public"."reactive_locks_watchers" w
                                  WHERE w.key = p_key AND w.expires_at > now()), '-infinity'))
                ON CONFLICT ON CONSTRAINT "reactive_locks_rw_pkey"
                DO UPDATE SET expires_at = excluded.expires_at, watched_until = GREATEST(g.watched_until, excluded.watched_until);
        END IF;
        RETURN QUERY SELECT false, 0::bigint,
            COALESCE((SELECT (extract(epoch FROM min(g.expires_at) - now()) * 1000000)::bigint FROM "public"."reactive_locks_rw" g
                      WHERE g.name = p_name AND (g.mode <> 'i' OR (p_mode = 'r' AND NOT v_writer))), 0);
        RETURN;
    END IF;
    IF v_own_row THEN
        DELETE FROM "public"."reactive_locks_rw" g WHERE g.name = p_name AND g.owner = p_owner;
    END IF;
    -- who listens, read under the keys' locks taken above (as the semaphore's grant)
    SELECT max(w.expires_at) FILTER (WHERE w.key = p_key), COALESCE(bool_or(w.key = '\o' || p_key), false)
      INTO v_watched, v_observed
      FROM "public"."reactive_locks_watchers" w WHERE w.key IN (p_key, '\o' || p_key) AND w.expires_at > now();
    RETURN QUERY INSERT INTO "public"."reactive_locks_rw" AS g (name, owner, mode, token, expires_at, watched_until)
        VALUES (p_name, p_owner, p_mode, nextval('"public"."reactive_locks_token_seq"'), v_until, COALESCE(v_watched, '-infinity'))
        RETURNING true, g.token, 0::bigint;
    IF v_observed THEN
        PERFORM pg_notify(p_channel, 'A 0 -1 ' || p_key);
    END IF;
END
$fn$;

-- ================================================================================================
-- task queue
-- ================================================================================================

-- Serialized with the lock schema's migration (same transaction-scoped advisory lock).
SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
        CREATE SCHEMA "public";
    END IF;
END
$$;

-- Claim tokens come from the lock sequence: durable, never repeating, never going back.
CREATE SEQUENCE IF NOT EXISTS "public"."reactive_locks_token_seq" AS bigint NO CYCLE;

-- One row per task of a queue.
--   queue, task_id    stored form (NUL, lone surrogates and '\' escaped, see TextEscapes.java)
--   status            pending: capturable (registered or released)
--                     in_progress: claimed until claim_expires_at; capturable again once that passed
--                     failed: capturable, a retry was used
--                     done, dead (failed with no retry left): never captured again, kept visible
--   retries_left      failures that will still be retried (a failure with none left is dead)
--   attempts          how many times the task was captured
--   claim_owner       the owner id of the last capture (one per capture statement)
--   claim_token       its fencing token, from "public"."reactive_locks_token_seq": greater than that of every earlier capture
--   claim_expires_at  while in_progress: when the claim ends, by the SERVER's clock; else NULL
--   ready_at          the capture order: when the task became capturable (registration, failure,
--                     release) or, while in_progress, when its claim expires (= claim_expires_at)
--   payload           optional text for the worker (stored form, like the ids)
CREATE TABLE IF NOT EXISTS "public"."reactive_lock_tasks" (
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
    CONSTRAINT "reactive_lock_tasks_pkey" PRIMARY KEY (queue, task_id),
    CHECK (status IN ('pending', 'in_progress', 'done', 'failed', 'dead')),
    CHECK (retries_left >= 0),
    CHECK (status <> 'in_progress' OR (claim_owner IS NOT NULL AND claim_token IS NOT NULL
                                       AND claim_expires_at IS NOT NULL AND ready_at = claim_expires_at))
);

-- Capture: an ordered range scan of one queue's live tasks (done and dead ones are not in it).
CREATE INDEX IF NOT EXISTS "reactive_lock_tasks_ready_idx" ON "public"."reactive_lock_tasks" (queue, ready_at)
    WHERE status IN ('pending', 'failed', 'in_progress');

-- ================================================================================================
-- fenced values
-- ================================================================================================

SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = 'public') THEN
        CREATE SCHEMA "public";
    END IF;
END
$$;

-- One row per key:
--   key    the key (stored form: NUL, lone surrogates and '\' escaped, see LockNames)
--   value  the value's UTF-8 bytes; NULL after a fenced delete (the fence stays)
--   fence  the highest token admitted for the key (Fencing.admits: token >= fence)
CREATE TABLE IF NOT EXISTS "public"."reactive_locks_fenced_values" (
    key   text   NOT NULL,
    value bytea,
    fence bigint NOT NULL,
    CONSTRAINT "reactive_locks_fenced_values_pkey" PRIMARY KEY (key)
);
