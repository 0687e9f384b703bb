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
    CONSTRAINT ${rw_pkey} PRIMARY KEY (name, owner)
);

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
BEGIN
    -- the name's lock, and the observers' key SHARED (held to commit, as ${notify_fn} takes it): a grant is
    -- announced only while a client observes the name (its key \o and p_key, registered by ${watch_fn} under that
    -- key's lock taken EXCLUSIVELY), so either the registration committed first and the grant's check below sees
    -- it, or the grant committed first and the observer's read sees the grant. Waiters need the releases only.
    -- Issue 30: one statement; the grant called ${notify_fn} before (its lock, its EXISTS, the call: 3 statements)
    -- and announced every grant to the name's waiters, a serialized commit each on a contended name.
    PERFORM pg_advisory_xact_lock(hashtextextended('reactive-locks rwlock ' || p_name, 0)),
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
            INSERT INTO ${rw_table} AS g (name, owner, mode, token, expires_at) VALUES (p_name, p_owner, 'i', 0, v_until)
                ON CONFLICT ON CONSTRAINT ${rw_pkey} DO UPDATE SET expires_at = excluded.expires_at;
        END IF;
        RETURN QUERY SELECT false, 0::bigint,
            COALESCE((SELECT (extract(epoch FROM min(g.expires_at) - now()) * 1000000)::bigint FROM ${rw_table} g
                      WHERE g.name = p_name AND (g.mode <> 'i' OR (p_mode = 'r' AND NOT v_writer))), 0);
        RETURN;
    END IF;
    IF v_own_row THEN
        DELETE FROM ${rw_table} g WHERE g.name = p_name AND g.owner = p_owner;
    END IF;
    RETURN QUERY INSERT INTO ${rw_table} AS g (name, owner, mode, token, expires_at)
        VALUES (p_name, p_owner, p_mode, nextval('${sequence}'), v_until)
        RETURNING true, g.token, 0::bigint;
    IF EXISTS (SELECT 1 FROM ${watcher_table} w WHERE w.key = '\o' || p_key AND w.expires_at > now()) THEN
        PERFORM pg_notify(p_channel, 'A 0 -1 ' || p_key);
    END IF;
END
$fn$;
