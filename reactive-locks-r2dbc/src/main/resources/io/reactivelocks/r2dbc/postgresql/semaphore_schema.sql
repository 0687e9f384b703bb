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
--   watched_until  until when a client waits for (or observes) the name's releases: the release sends a
--                  NOTIFY only before then (set by the grant from the watchers table, and kept by ${watch_fn}
--                  and ${unwatch_fn} under the row lock, as the lock table's column)
CREATE TABLE IF NOT EXISTS ${permit_table} (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    watched_until timestamptz NOT NULL DEFAULT '-infinity',
    CONSTRAINT ${permit_pkey} PRIMARY KEY (name, owner)
);

-- Tables created by older versions get the column (a catalog-only change, no rewrite).
ALTER TABLE ${permit_table} ADD COLUMN IF NOT EXISTS watched_until timestamptz NOT NULL DEFAULT '-infinity';

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
    watched timestamptz;
    observed boolean;
BEGIN
    -- the name's lock, then the name's watcher key and its observers' key SHARED, in that order (held to commit, as
    -- ${notify_fn} takes them; ${watch_fn} takes them EXCLUSIVELY in the same order to register a client): so a
    -- registration either committed first, and the read of the watchers below sees it, or comes after this grant
    -- committed, and its re-check sees the grant — and it marks the name's rows, this grant's included, as watched.
    -- Issue 30: the grant announces itself only to observers (waiters need the releases), and a release reads the
    -- watch from its row (semaphore_release.sql) instead of calling ${notify_fn}: 8 nested statements per
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
    -- who listens, read under the keys' locks taken above: the new rows carry the waiters' watch (their
    -- release then notifies without asking), and an observer hears of the grant
    SELECT max(w.expires_at) FILTER (WHERE w.key = p_key), COALESCE(bool_or(w.key = '\o' || p_key), false)
      INTO watched, observed
      FROM ${watcher_table} w WHERE w.key IN (p_key, '\o' || p_key) AND w.expires_at > now();
    RETURN QUERY INSERT INTO ${permit_table} AS p (name, owner, token, expires_at, watched_until)
        SELECT p_name, o.owner, nextval('${sequence}'), now() + p_ttl_us * interval '1 microsecond',
               COALESCE(watched, '-infinity')
        FROM unnest(p_owners) WITH ORDINALITY AS o(owner, i) ORDER BY o.i
        RETURNING true, p.owner, p.token, 0::bigint;
    IF observed THEN
        PERFORM pg_notify(p_channel, 'A 0 -1 ' || p_key);
    END IF;
END
$fn$;
