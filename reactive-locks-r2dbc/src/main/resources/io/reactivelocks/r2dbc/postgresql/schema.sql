-- reactive-locks: the PostgreSQL schema. Idempotent: run by PostgresLockBackend.migrate() (and on
-- first use unless disabled) as ONE simple query, i.e. one implicit transaction.
-- Placeholders are filled with validated identifiers ([a-zA-Z_][a-zA-Z0-9_]{0,62}), double-quoted:
--   ${schema}          the schema                   (default "public")
--   ${schema_name}     the same, unquoted, for the catalog lookup below
--   ${sequence}        the fencing-token sequence   (default "public"."reactive_locks_token_seq")
--   ${table}           the lock table               (default "public"."reactive_locks")
--   ${table_pkey}      its primary key constraint
--   ${expires_index}   its index on expires_at
--   ${window_table}    the window-lock table        (default "public"."reactive_lock_windows")
--   ${window_pkey}     its primary key constraint

-- Concurrent CREATE ... IF NOT EXISTS can still collide in the catalogs: serialize migrations.
-- A transaction-scoped advisory lock (released at commit) is safe on pooled connections.
SELECT pg_advisory_xact_lock(7305467431562270021);

-- CREATE SCHEMA IF NOT EXISTS would demand the CREATE privilege on the database even when the
-- schema exists; only create it when it is missing.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${schema_name}') THEN
        CREATE SCHEMA ${schema};
    END IF;
END
$$;

-- Fencing tokens: one durable, monotonic sequence (shared by locks and window claims). Tokens
-- may skip values (a takeover draws twice, rolled-back draws are lost); they never repeat or go
-- back, including across server restarts (sequences are WAL-logged).
CREATE SEQUENCE IF NOT EXISTS ${sequence} AS bigint NO CYCLE;

-- One row per held (or expired, not yet taken over or released) lock.
--   name        the lock name (stored form: NUL, lone surrogates and '\' escaped, see TextEscapes.java)
--   owner       the holder's random owner id (same stored form)
--   token       the fencing token of the grant, from ${sequence}
--   expires_at  when the lease ends, by the SERVER's clock (now() + TTL at grant/renewal)
--   payload     the holder's payload (at most 4096 UTF-8 bytes, stored form as names), NULL for none
--   watched_until  until when a client watches the name (${watch_fn} sets it, with the watchers
--               table's row): a grant or release of the row notifies only while it is in the future
-- A release does not delete the row: it clears the owner (''), so the next grant of the name is
-- one UPDATE of the same row, a HOT update (no indexed column changes: no index on expires_at).
-- Free rows (released, expired, or a watcher's placeholder with token 0) are deleted by
-- PostgresLockBackend.purgeExpired, which each backend also runs every 10 minutes.
CREATE TABLE IF NOT EXISTS ${table} (
    name       text        NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    payload    text,
    watched_until timestamptz NOT NULL DEFAULT '-infinity',
    CONSTRAINT ${table_pkey} PRIMARY KEY (name)
);

-- Tables created by older versions get the columns (catalog-only changes, no rewrite).
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS payload text;
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS watched_until timestamptz NOT NULL DEFAULT '-infinity';

-- Older versions indexed expires_at: every grant and release then wrote both indexes; without it
-- they are HOT updates. The purge scans the table (one row per name in use).
DROP INDEX IF EXISTS ${schema}.${expires_index};

-- Window locks ("run once per period across the fleet"): one row per name and period, holding
-- the last claimed window number floor(server epoch / period).
CREATE TABLE IF NOT EXISTS ${window_table} (
    name       text        NOT NULL,
    period_us  bigint      NOT NULL,
    window_no  bigint      NOT NULL,
    owner      text        NOT NULL,
    token      bigint      NOT NULL,
    claimed_at timestamptz NOT NULL,
    CONSTRAINT ${window_pkey} PRIMARY KEY (name, period_us)
);
