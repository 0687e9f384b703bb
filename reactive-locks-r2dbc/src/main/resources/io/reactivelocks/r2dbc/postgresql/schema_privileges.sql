-- Which privileges does the current role lack on the store's objects (SchemaMode.VALIDATE, run once
-- none is missing)? USAGE on the schema; SELECT, INSERT, UPDATE and DELETE on each table; USAGE (or
-- UPDATE: either lets nextval draw) on the sequence; EXECUTE on each function. Objects are found by
-- name in the catalogs (readable by every role) and checked by oid, so a schema without USAGE does not
-- make the lookup itself fail. One object per array position, all bound as parameters:
--   $1 kind: schema, table, sequence or function
--   $2 its schema, unquoted
--   $3 its name, unquoted ('' for a schema)
-- Returns the 1-based position of each object lacking a privilege, the privilege, and the role.
SELECT e.i AS object, p.privilege, current_user::text AS role
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS e(kind, schema_name, object_name, i)
CROSS JOIN LATERAL unnest(CASE e.kind WHEN 'table' THEN ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']
                                      WHEN 'function' THEN ARRAY['EXECUTE']
                                      ELSE ARRAY['USAGE'] END) AS p(privilege)
WHERE NOT CASE e.kind
    WHEN 'schema' THEN has_schema_privilege(
        (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = e.schema_name), 'USAGE')
    WHEN 'table' THEN has_table_privilege(
        (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = e.schema_name AND c.relname = e.object_name), p.privilege)
    WHEN 'sequence' THEN has_sequence_privilege(
        (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = e.schema_name AND c.relname = e.object_name), 'USAGE')
      OR has_sequence_privilege(
        (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = e.schema_name AND c.relname = e.object_name), 'UPDATE')
    ELSE EXISTS (
        SELECT 1 FROM pg_catalog.pg_proc f JOIN pg_catalog.pg_namespace n ON n.oid = f.pronamespace
        WHERE n.nspname = e.schema_name AND f.proname = e.object_name AND has_function_privilege(f.oid, 'EXECUTE'))
END
ORDER BY e.i, p.privilege
