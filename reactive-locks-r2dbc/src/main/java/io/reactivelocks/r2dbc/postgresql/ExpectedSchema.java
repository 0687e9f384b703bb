package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.SchemaMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import reactor.core.publisher.Mono;

/**
 * The objects a rendered schema script creates — read from the script itself, so the check of
 * {@link SchemaMode#VALIDATE} and the scripts of {@link SchemaMode#CREATE} cannot drift apart:
 * each {@code CREATE SEQUENCE}, {@code CREATE TABLE} (and the columns in its body),
 * {@code ALTER TABLE ... ADD COLUMN}, {@code CREATE INDEX} and {@code CREATE OR REPLACE FUNCTION}
 * (with its parameter and result column names). The scripts are ours and written in that shape
 * ({@code schema.sql} and the others next to this class).
 */
final class ExpectedSchema {

    private static final String NAME = "\"([a-zA-Z0-9_]+)\"";
    private static final String QUALIFIED = NAME + "\\." + NAME;
    private static final Pattern SEQUENCE = Pattern.compile("CREATE SEQUENCE IF NOT EXISTS " + QUALIFIED);
    private static final Pattern TABLE = Pattern.compile("CREATE TABLE IF NOT EXISTS " + QUALIFIED + " \\((.*?)\\n\\);", Pattern.DOTALL);
    private static final Pattern COLUMN = Pattern.compile("^    ([a-z_][a-z0-9_]*)\\s", Pattern.MULTILINE);
    private static final Pattern ADD_COLUMN = Pattern.compile("ALTER TABLE " + QUALIFIED + " ADD COLUMN IF NOT EXISTS ([a-z_][a-z0-9_]*)");
    private static final Pattern INDEX = Pattern.compile("CREATE INDEX IF NOT EXISTS " + NAME + " ON " + QUALIFIED);
    private static final Pattern FUNCTION = Pattern.compile(
            "CREATE OR REPLACE FUNCTION " + QUALIFIED + "\\((.*?)\\)\\s*RETURNS\\s+(?:TABLE\\s*\\((.*?)\\))?", Pattern.DOTALL);

    private final List<SchemaObject> objects;

    private ExpectedSchema(List<SchemaObject> objects) {
        this.objects = List.copyOf(objects);
    }

    /**
     * @param scripts rendered schema scripts (placeholders filled in)
     * @return the objects they create, each once, in the order the scripts create them
     */
    static ExpectedSchema of(String... scripts) {
        Map<String, SchemaObject> found = new LinkedHashMap<>();
        for (String script : scripts) {
            String sql = withoutComments(script);
            List<Found> objects = new ArrayList<>();
            Matcher m = SEQUENCE.matcher(sql);
            while (m.find()) {
                objects.add(new Found(m.start(), new SchemaObject("sequence", m.group(1), m.group(2), "", "")));
            }
            m = TABLE.matcher(sql);
            while (m.find()) {
                objects.add(new Found(m.start(), new SchemaObject("table", m.group(1), m.group(2), "", "")));
                Matcher c = COLUMN.matcher(m.group(3));
                while (c.find()) {
                    objects.add(new Found(m.start(3) + c.start(), new SchemaObject("column", m.group(1), m.group(2), c.group(1), "")));
                }
            }
            m = ADD_COLUMN.matcher(sql);
            while (m.find()) {
                objects.add(new Found(m.start(), new SchemaObject("column", m.group(1), m.group(2), m.group(3), "")));
            }
            m = INDEX.matcher(sql);
            while (m.find()) {
                objects.add(new Found(m.start(), new SchemaObject("index", m.group(2), m.group(1), "", "")));
            }
            m = FUNCTION.matcher(sql);
            while (m.find()) {
                List<String> names = new ArrayList<>(parameterNames(m.group(3)));
                if (m.group(4) != null) {
                    names.addAll(parameterNames(m.group(4)));
                }
                objects.add(new Found(m.start(), new SchemaObject("function", m.group(1), m.group(2), "", String.join(",", names))));
            }
            // in the order of the script: a table before its columns and indexes
            objects.sort(Comparator.comparingInt(Found::at));
            for (Found f : objects) {
                found.putIfAbsent(f.object().label(), f.object());
            }
        }
        return new ExpectedSchema(new ArrayList<>(found.values()));
    }

    /** @return the objects, in creation order */
    List<SchemaObject> objects() {
        return objects;
    }

    /**
     * Checks that every object exists ({@code schema_validate.sql}, catalog reads only), then that
     * the role may use them ({@code schema_privileges.sql}).
     *
     * @param backend whose pool runs the check
     * @return completes when all exist and may be used; else errors with a {@link PostgresSchemaException}
     *         naming each missing object or, when none is missing, each missing privilege
     */
    Mono<Void> check(PostgresLockBackend backend) {
        int n = objects.size();
        String[] kinds = new String[n];
        String[] schemas = new String[n];
        String[] names = new String[n];
        String[] columns = new String[n];
        String[] args = new String[n];
        for (int i = 0; i < n; i++) {
            SchemaObject o = objects.get(i);
            kinds[i] = o.kind();
            schemas[i] = o.schema();
            names[i] = o.name();
            columns[i] = o.column();
            args[i] = o.argumentNames();
        }
        return backend.query(backend.schemaValidateSql,
                        st -> st.bind(0, kinds).bind(1, schemas).bind(2, names).bind(3, columns).bind(4, args),
                        (row, md) -> objects.get(row.get("missing", Long.class).intValue() - 1).label())
                .collectList()
                .flatMap(missing -> missing.isEmpty() ? checkPrivileges(backend) : Mono.error(PostgresSchemaException.missing(missing)));
    }

    /** The privileges the statements need: on the schema, and on each table, sequence and function. */
    private Mono<Void> checkPrivileges(PostgresLockBackend backend) {
        List<SchemaObject> used = new ArrayList<>();
        for (SchemaObject o : objects) {
            if (used.stream().noneMatch(u -> u.kind().equals("schema") && u.schema().equals(o.schema()))) {
                used.add(new SchemaObject("schema", o.schema(), "", "", ""));
            }
        }
        for (SchemaObject o : objects) {
            if (o.kind().equals("table") || o.kind().equals("sequence") || o.kind().equals("function")) {
                used.add(o);
            }
        }
        String[] kinds = used.stream().map(SchemaObject::kind).toArray(String[]::new);
        String[] schemas = used.stream().map(SchemaObject::schema).toArray(String[]::new);
        String[] names = used.stream().map(SchemaObject::name).toArray(String[]::new);
        return backend.query(backend.schemaPrivilegesSql, st -> st.bind(0, kinds).bind(1, schemas).bind(2, names),
                        (row, md) -> new Lacking(used.get(row.get("object", Long.class).intValue() - 1),
                                row.get("privilege", String.class), row.get("role", String.class)))
                .collectList()
                .flatMap(lacking -> {
                    if (lacking.isEmpty()) {
                        return Mono.empty();
                    }
                    Map<SchemaObject, List<String>> byObject = new LinkedHashMap<>();
                    for (Lacking l : lacking) {
                        byObject.computeIfAbsent(l.object(), k -> new ArrayList<>()).add(l.privilege());
                    }
                    List<String> labels = new ArrayList<>();
                    byObject.forEach((o, privileges) -> labels.add("privilege " + String.join(", ", privileges) + " on "
                            + (o.kind().equals("schema") ? "schema " + o.schema() : o.label())));
                    return Mono.error(PostgresSchemaException.lacking(lacking.get(0).role(), labels,
                            byObject.keySet().stream().map(SchemaObject::schema).distinct().toList()));
                });
    }

    /** A privilege the role lacks on an object. */
    private record Lacking(SchemaObject object, String privilege, String role) {
    }

    /** The names of a parameter list or a {@code RETURNS TABLE} column list: the first word of each item. */
    private static List<String> parameterNames(String list) {
        List<String> names = new ArrayList<>();
        for (String item : list.split(",")) {
            String word = item.strip().split("\\s+")[0];
            if (!word.isEmpty()) {
                names.add(word);
            }
        }
        return names;
    }

    private static String withoutComments(String script) {
        StringBuilder sql = new StringBuilder(script.length());
        for (String line : script.split("\n")) {
            if (!line.stripLeading().startsWith("--")) {
                sql.append(line).append('\n');
            }
        }
        return sql.toString();
    }

    /** An object and where its script creates it. */
    private record Found(int at, SchemaObject object) {
    }

    /**
     * One object the store needs.
     *
     * @param kind          table, column, sequence, index or function (or schema, for its privileges)
     * @param schema        its schema
     * @param name          its name (a column's table)
     * @param column        a column's name, else empty
     * @param argumentNames a function's parameter and result column names, comma-separated, else empty
     */
    record SchemaObject(String kind, String schema, String name, String column, String argumentNames) {

        /** @return {@code kind schema.name} ({@code column schema.table.column}), as reported */
        String label() {
            return kind + " " + schema + "." + name + (column.isEmpty() ? "" : "." + column);
        }
    }
}
