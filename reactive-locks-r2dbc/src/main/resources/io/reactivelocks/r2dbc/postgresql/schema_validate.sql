-- Which of the objects the store needs are missing (SchemaMode.VALIDATE)? Reads only the catalogs,
-- which every role may read. One object per array position, all bound as parameters:
--   $1 kind: table, column, sequence, index or function
--   $2 its schema, unquoted
--   $3 its name, unquoted (a column's: its table)
--   $4 a column's name, else ''
--   $5 a function's parameter and result column names, comma-separated ('' for none): a function of
--      that name lacking one of them is an older version, so it counts as missing
-- Returns the 1-based positions of the missing objects. A column of a missing table is not reported
-- (the table is).
SELECT e.i AS missing
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
     WITH ORDINALITY AS e(kind, schema_name, object_name, column_name, arg_names, i)
WHERE NOT CASE e.kind
    WHEN 'function' THEN EXISTS (
        SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = e.schema_name AND p.proname = e.object_name
          AND COALESCE(p.proargnames, '{}'::text[]) @> string_to_array(e.arg_names, ','))
    WHEN 'column' THEN NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = e.schema_name AND c.relname = e.object_name AND c.relkind IN ('r', 'p'))
      OR EXISTS (
        SELECT 1 FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = e.schema_name AND c.relname = e.object_name AND a.attname = e.column_name
          AND a.attnum > 0 AND NOT a.attisdropped)
    ELSE EXISTS (
        SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = e.schema_name AND c.relname = e.object_name
          AND c.relkind::text = ANY (CASE e.kind WHEN 'table' THEN ARRAY['r', 'p']
                                                 WHEN 'sequence' THEN ARRAY['S']
                                                 ELSE ARRAY['i', 'I'] END))
END
ORDER BY e.i
