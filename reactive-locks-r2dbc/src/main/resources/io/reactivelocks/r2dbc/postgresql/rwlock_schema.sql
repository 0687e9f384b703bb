-- reactive-locks: the read-write lock table and its grant function (a session's readWriteLocks).
-- Idempotent; run as ONE simple query on first use unless schema creation is disabled.
-- Placeholders are validated, double-quoted identifiers:
--   ${schema}          the schema
--   ${schema_name}     the same, unquoted, for the catalog lookup below
--   ${sequence}        the fencing-token sequence, shared with the locks
--   ${rw_table}        the grants table  (default "public"."reactive_locks_rw")
--   ${rw_pkey}         its primary key constraint
--   ${grant_fn}        the grant function (default "public"."reactive_locks_rw_grant")
SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${schema_name}') THEN
        CREATE SCHEMA ${schema};
    END IF;
END
$$;

CREATE SEQUENCE IF NOT EXISTS ${sequence} AS bigint NO CYCLE;

-- One row per grant held, or per writer waiting (or expired and not yet removed):
--   name        the lock name (stored form: NUL, lone surrogates and '\' escaped, see LockNames)
--   owner       the owner id (same stored form)
--   mode        'r' a reader, 'w' the writer, 'i' a waiting writer's intent (blocks new readers
--               under the writer-preferring policy until it expires or is released)
--   token       the grant's fencing token, from ${sequence}; 0 for an intent
--   expires_at  when the grant or intent ends, by the SERVER's clock
CREATE TABLE IF NOT EXISTS ${rw_table} (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    mode       "char"      NOT NULL CHECK (mode IN ('r', 'w', 'i')),
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    watched_until timestamptz NOT NULL DEFAULT '-infinity',
    CONSTRAINT ${rw_pkey} PRIMARY KEY (name, owner)
);

-- Tables created by older versions get the column (a catalog-only change, no rewrite): until when a client
-- waits for (or observes) the name's releases, as the permits table's.
ALTER TABLE ${rw_table} ADD COLUMN IF NOT EXISTS watched_until timestamptz NOT NULL DEFAULT '-infinity';

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
CREATE OR REPLACE FUNCTION ${grant_fn}(p_name text, p_owner text, p_mode "char", p_writer_pref boolean,
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
    -- ${notify_fn} takes them; ${watch_fn} takes them EXCLUSIVELY in the same order to register a client): so a
    -- registration either committed first, and the read of the watchers below sees it, or comes after this grant
    -- committed, and its re-check sees the grant — and it marks the name's rows, this grant's included, as watched.
    -- Issue 30: the grant announces itself only to observers (waiters need the releases), and a release reads the
    -- watch from its row (semaphore_release.sql) instead of calling ${notify_fn}: 8 nested statements per
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
      FROM ${rw_table} g WHERE g.name = p_name;
    IF v_expired > 0 THEN
        DELETE FROM ${rw_table} g WHERE g.name = p_name AND g.expires_at <= now();
    END IF;
    IF v_mine THEN
        UPDATE ${rw_table} g SET expires_at = v_until
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
            INSERT INTO ${rw_table} AS g (name, owner, mode, token, expires_at, watched_until)
                VALUES (p_name, p_owner, 'i', 0, v_until,
                        COALESCE((SELECT max(w.expires_at) FROM ${watcher_table} w
                                  WHERE w.key = p_key AND w.expires_at > now()), '-infinity'))
                ON CONFLICT ON CONSTRAINT ${rw_pkey}
                DO UPDATE SET expires_at = excluded.expires_at, watched_until = GREATEST(g.watched_until, excluded.watched_until);
        END IF;
        RETURN QUERY SELECT false, 0::bigint,
            COALESCE((SELECT (extract(epoch FROM min(g.expires_at) - now()) * 1000000)::bigint FROM ${rw_table} g
                      WHERE g.name = p_name AND (g.mode <> 'i' OR (p_mode = 'r' AND NOT v_writer))), 0);
        RETURN;
    END IF;
    IF v_own_row THEN
        DELETE FROM ${rw_table} g WHERE g.name = p_name AND g.owner = p_owner;
    END IF;
    -- who listens, read under the keys' locks taken above (as the semaphore's grant)
    SELECT max(w.expires_at) FILTER (WHERE w.key = p_key), COALESCE(bool_or(w.key = '\o' || p_key), false)
      INTO v_watched, v_observed
      FROM ${watcher_table} w WHERE w.key IN (p_key, '\o' || p_key) AND w.expires_at > now();
    RETURN QUERY INSERT INTO ${rw_table} AS g (name, owner, mode, token, expires_at, watched_until)
        VALUES (p_name, p_owner, p_mode, nextval('${sequence}'), v_until, COALESCE(v_watched, '-infinity'))
        RETURNING true, g.token, 0::bigint;
    IF v_observed THEN
        PERFORM pg_notify(p_channel, 'A 0 -1 ' || p_key);
    END IF;
END
$fn$;
