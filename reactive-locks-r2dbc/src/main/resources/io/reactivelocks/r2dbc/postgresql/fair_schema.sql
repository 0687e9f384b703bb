-- reactive-locks: the fair lock's waiters table and its grant function (a session's fairLocks).
-- Idempotent; run as ONE simple query on first use unless schema creation is disabled. The held
-- fair lock is a row of the lock table (schema.sql), like a mutex's.
-- Placeholders are validated, double-quoted identifiers:
--   ${schema}          the schema
--   ${schema_name}     the same, unquoted, for the catalog lookup below
--   ${sequence}        the fencing-token sequence, shared with the locks
--   ${table}           the lock table
--   ${waiter_table}    the waiters table  (default "public"."reactive_locks_waiters")
--   ${waiter_pkey}     its primary key constraint
--   ${waiter_index}    its index on (name, seq)
--   ${grant_fn}        the grant function (default "public"."reactive_locks_waiters_grant")
SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${schema_name}') THEN
        CREATE SCHEMA ${schema};
    END IF;
END
$$;

CREATE SEQUENCE IF NOT EXISTS ${sequence} AS bigint NO CYCLE;

-- One row per waiting owner of a fair lock (or expired and not yet removed):
--   name        the lock name (stored form)
--   owner       the waiter's owner id (stored form)
--   seq         its place in line, from ${sequence} at its first arrival
--   expires_at  when the entry ends unless the waiter asks again, by the SERVER's clock
CREATE TABLE IF NOT EXISTS ${waiter_table} (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    seq        bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT ${waiter_pkey} PRIMARY KEY (name, owner)
);

CREATE INDEX IF NOT EXISTS ${waiter_index} ON ${waiter_table} (name, seq);

-- Versions before the rank (r_ahead) returned fewer columns: CREATE OR REPLACE cannot change that.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_proc p
               WHERE p.oid = to_regprocedure('${grant_fn}(text,text,bigint,boolean,bigint,text,text,text)')
                 AND NOT ('r_ahead' = ANY (p.proargnames))) THEN
        DROP FUNCTION ${grant_fn}(text, text, bigint, boolean, bigint, text, text, text);
    END IF;
END
$$;

-- One attempt at a fair lock. Serialized per name by the same transaction-scoped advisory lock as
-- the mutex's acquire.sql (so the token order holds across both). Drops expired waiters; the
-- holder asking again gets its token back with a fresh TTL; a live holder or an earlier waiter
-- makes a try (p_wait false) busy and a wait enqueue (or refresh) the owner; otherwise the owner
-- takes the lock row with a token from ${sequence} and leaves the line. Returns one row:
--   r_kind 1 granted (r_token), 0 busy (the holder, or r_remaining_us -1 when free but waiters
--   are in line), 2 queued (r_remaining_us: µs until the holder's TTL or the head waiter's
--   deadline passes, when something may change without a notification; r_ahead: how many waiters are
--   in line before the caller, so that a release wakes only the waiter it made head, see
--   io.reactivelocks.spi.WaiterLine). The grant is announced only when a client watches the name.
CREATE OR REPLACE FUNCTION ${grant_fn}(p_name text, p_owner text, p_ttl_us bigint, p_wait boolean,
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
    DELETE FROM ${waiter_table} x WHERE x.name = p_name AND x.expires_at <= now();
    SELECT l.owner, l.token, l.expires_at, l.payload INTO h FROM ${table} l WHERE l.name = p_name;
    IF FOUND AND h.owner = p_owner THEN
        UPDATE ${table} l SET expires_at = now() + p_ttl_us * interval '1 microsecond' WHERE l.name = p_name;
        DELETE FROM ${waiter_table} x WHERE x.name = p_name AND x.owner = p_owner;
        RETURN QUERY SELECT 1, h.token, NULL::text, NULL::bigint, NULL::text, NULL::bigint;
        RETURN;
    END IF;
    IF FOUND AND h.expires_at > now() THEN
        IF NOT p_wait THEN
            RETURN QUERY SELECT 0, h.token, h.owner,
                GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, h.payload, NULL::bigint;
            RETURN;
        END IF;
        INSERT INTO ${waiter_table} AS x (name, owner, seq, expires_at)
            VALUES (p_name, p_owner, nextval('${sequence}'), now() + p_waiter_ttl_us * interval '1 microsecond')
            ON CONFLICT ON CONSTRAINT ${waiter_pkey} DO UPDATE SET expires_at = excluded.expires_at
            RETURNING x.seq INTO v_seq;
        RETURN QUERY SELECT 2, 0::bigint, NULL::text,
            GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, NULL::text,
            (SELECT count(*) FROM ${waiter_table} x WHERE x.name = p_name AND x.seq < v_seq);
        RETURN;
    END IF;
    SELECT x.owner, x.expires_at INTO w FROM ${waiter_table} x WHERE x.name = p_name ORDER BY x.seq LIMIT 1;
    IF FOUND AND w.owner <> p_owner THEN
        IF NOT p_wait THEN
            RETURN QUERY SELECT 0, 0::bigint, NULL::text, -1::bigint, NULL::text, NULL::bigint;
            RETURN;
        END IF;
        INSERT INTO ${waiter_table} AS x (name, owner, seq, expires_at)
            VALUES (p_name, p_owner, nextval('${sequence}'), now() + p_waiter_ttl_us * interval '1 microsecond')
            ON CONFLICT ON CONSTRAINT ${waiter_pkey} DO UPDATE SET expires_at = excluded.expires_at
            RETURNING x.seq INTO v_seq;
        RETURN QUERY SELECT 2, 0::bigint, NULL::text,
            GREATEST(0, floor(extract(epoch FROM w.expires_at - now()) * 1000000))::bigint, NULL::text,
            (SELECT count(*) FROM ${waiter_table} x WHERE x.name = p_name AND x.seq < v_seq);
        RETURN;
    END IF;
    -- The row may have been taken since the read above by a plain lock grant of the same name
    -- (acquire_row.sql takes no advisory lock): take it only if still free, with a token drawn
    -- under its row lock (the insert's draw is under the name's advisory lock, see acquire.sql).
    INSERT INTO ${table} AS l (name, owner, token, expires_at, payload)
        VALUES (p_name, p_owner, nextval('${sequence}'), now() + p_ttl_us * interval '1 microsecond', p_payload)
        ON CONFLICT (name) DO UPDATE
            SET owner = excluded.owner, token = nextval('${sequence}'), expires_at = excluded.expires_at,
                payload = excluded.payload
            WHERE l.expires_at <= now()
        RETURNING l.token, l.watched_until > now() INTO t, v_watched;
    IF t IS NULL THEN
        SELECT l.owner, l.token, l.expires_at, l.payload INTO h FROM ${table} l WHERE l.name = p_name;
        RETURN QUERY SELECT 0, h.token, h.owner,
            GREATEST(0, floor(extract(epoch FROM h.expires_at - now()) * 1000000))::bigint, h.payload, NULL::bigint;
        RETURN;
    END IF;
    DELETE FROM ${waiter_table} x WHERE x.name = p_name AND x.owner = p_owner;
    -- announced while a client watches the name: the row's watched_until, read under its row lock (asking
    -- ${notify_fn} for the name's advisory lock after the row's deadlocked with a watch of the name)
    IF v_watched THEN
        PERFORM pg_notify(p_channel, 'A ' || t || ' ' || p_suffix);
    END IF;
    RETURN QUERY SELECT 1, t, NULL::text, NULL::bigint, NULL::text, NULL::bigint;
END
$fn$;
