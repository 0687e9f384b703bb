-- reactive-locks: the fenced-values table (a session's fencedValues). Idempotent; run as ONE
-- simple query on first use unless schema creation is disabled. Placeholders are validated,
-- double-quoted identifiers:
--   ${schema}          the schema
--   ${schema_name}     the same, unquoted, for the catalog lookup below
--   ${fenced_table}    the table   (default "public"."reactive_locks_fenced_values")
--   ${fenced_pkey}     its primary key constraint
SELECT pg_advisory_xact_lock(7305467431562270021);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = '${schema_name}') THEN
        CREATE SCHEMA ${schema};
    END IF;
END
$$;

-- One row per key:
--   key    the key (stored form: NUL, lone surrogates and '\' escaped, see LockNames)
--   value  the value's UTF-8 bytes; NULL after a fenced delete (the fence stays)
--   fence  the highest token admitted for the key (Fencing.admits: token >= fence)
CREATE TABLE IF NOT EXISTS ${fenced_table} (
    key   text   NOT NULL,
    value bytea,
    fence bigint NOT NULL,
    CONSTRAINT ${fenced_pkey} PRIMARY KEY (key)
);
