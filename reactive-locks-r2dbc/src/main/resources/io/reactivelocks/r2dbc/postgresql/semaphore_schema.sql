-- reactive-locks: the semaphore permits table and its grant function (a session's semaphores).
-- Idempotent; run as ONE simple query on first use unless schema creation is disabled.
-- Placeholders are validated, double-quoted identifiers:
--   ${schema}          the schema
--   ${schema_name}     the same, unquoted, for the catalog lookup below
--   ${sequence}        the fencing-token sequence, shared with the locks
--   ${permit_table}    the permits table  (default "public"."reactive_locks_permits")
--   ${permit_pkey}     its primary key constraint
--   ${grant_fn}        the grant function (default "public"."reactive_locks_permits_grant")
SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${schema_name}') THEN
        CREATE SCHEMA ${schema};
    END IF;
END
$$;

CREATE SEQUENCE IF NOT EXISTS ${sequence} AS bigint NO CYCLE;

-- One row per permit held (or expired and not yet removed):
--   name        the semaphore name (stored form: NUL, lone surrogates and '\' escaped, see LockNames)
--   owner       the permit's owner id (same stored form)
--   token       its fencing token, from ${sequence}
--   expires_at  when the permit ends, by the SERVER's clock
CREATE TABLE IF NOT EXISTS ${permit_table} (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT ${permit_pkey} PRIMARY KEY (name, owner)
);

-- Grants one permit to each of p_owners if the unexpired permits of p_name plus the new ones are
-- at most p_permits; else nothing. Serialized per name by a transaction-scoped advisory lock;
-- each statement after it reads a fresh snapshot (a VOLATILE plpgsql function in READ COMMITTED),
-- so the count sees every grant committed before the lock was ours. Owners that hold already (a
-- retried request) get their tokens back with a fresh TTL. Returns one row per owner
-- (granted, owner, token) or one row (false, NULL, 0, µs until the earliest permit expires).
-- An 'A' notification on p_channel with payload p_key tells observers of a grant (only while a client observes:
-- a live watcher row of \o and p_key).
CREATE OR REPLACE FUNCTION ${grant_fn}(p_name text, p_owners text[], p_permits integer, p_ttl_us bigint,
                                       p_channel text, p_key text)
RETURNS TABLE (granted boolean, owner text, token bigint, wait_us bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    held integer;
    expired integer;
    mine boolean;
BEGIN
    -- the name's lock, and the observers' key SHARED (held to commit, as ${notify_fn} takes it): a grant is
    -- announced only while a client observes the name (its key \o and p_key, registered by ${watch_fn} under that
    -- key's lock taken EXCLUSIVELY), so either the registration committed first and the grant's check below sees
    -- it, or the grant committed first and the observer's read sees the grant. Waiters need the releases only.
    -- Issue 30: one statement; the grant called ${notify_fn} before (its lock, its EXISTS, the call: 3 statements)
    -- and announced every grant to the name's waiters, a serialized commit each on a contended name.
    PERFORM pg_advisory_xact_lock(hashtextextended('reactive-locks semaphore ' || p_name, 0)),
            pg_advisory_xact_lock_shared(hashtextextended('\o' || p_key, 7305467431562270023));
    -- one read of the name's rows: the unexpired ones, the expired ones, and whether the first owner holds
    -- (a retried request); the expired rows are deleted only when there are any (issue 30: a name without
    -- permits costs the lock, this read and the insert — the DELETE, an EXISTS and a count before)
    SELECT count(*) FILTER (WHERE p.expires_at > now()), count(*) FILTER (WHERE p.expires_at <= now()),
           COALESCE(bool_or(p.owner = p_owners[1] AND p.expires_at > now()), false)
      INTO held, expired, mine
      FROM ${permit_table} p WHERE p.name = p_name;
    IF expired > 0 THEN
        DELETE FROM ${permit_table} p WHERE p.name = p_name AND p.expires_at <= now();
    END IF;
    IF mine THEN
        RETURN QUERY UPDATE ${permit_table} p SET expires_at = now() + p_ttl_us * interval '1 microsecond'
            WHERE p.name = p_name AND p.owner = ANY (p_owners)
            RETURNING true, p.owner, p.token, 0::bigint;
        RETURN;
    END IF;
    IF held + cardinality(p_owners) > p_permits THEN
        RETURN QUERY SELECT false, NULL::text, 0::bigint,
            COALESCE((SELECT (extract(epoch FROM min(p.expires_at) - now()) * 1000000)::bigint
                      FROM ${permit_table} p WHERE p.name = p_name), 0);
        RETURN;
    END IF;
    RETURN QUERY INSERT INTO ${permit_table} AS p (name, owner, token, expires_at)
        SELECT p_name, o.owner, nextval('${sequence}'), now() + p_ttl_us * interval '1 microsecond'
        FROM unnest(p_owners) WITH ORDINALITY AS o(owner, i) ORDER BY o.i
        RETURNING true, p.owner, p.token, 0::bigint;
    IF EXISTS (SELECT 1 FROM ${watcher_table} w WHERE w.key = '\o' || p_key AND w.expires_at > now()) THEN
        PERFORM pg_notify(p_channel, 'A 0 -1 ' || p_key);
    END IF;
END
$fn$;
