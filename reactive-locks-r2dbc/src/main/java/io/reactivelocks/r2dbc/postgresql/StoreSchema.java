package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.SchemaMode;
import java.util.List;

/**
 * The schema of the whole PostgreSQL store, one part per concept, rendered from the same
 * templates the stores run in {@link SchemaMode#CREATE}: what {@link PostgresLockBackend#validateSchema()}
 * checks and what {@code docs/ddl/postgresql.sql} holds (for the default options).
 */
final class StoreSchema {

    private StoreSchema() {
    }

    /**
     * @param options the names of the schema, tables and sequence
     * @return the concepts' schema scripts, in an order that runs as one script (the lock schema first:
     *         its watchers table and notify function are used by the others' functions)
     */
    static List<Part> parts(PostgresLockOptions options) {
        return List.of(
                new Part("lock", PostgresLockBackend.schemaScript(PostgresLockBackend.names(options))),
                new Part("fair lock", SqlScripts.render("fair_schema.sql", PostgresFairLockBackend.names(options), true)),
                new Part("semaphore", SqlScripts.render("semaphore_schema.sql", PostgresSemaphoreStore.names(options), true)),
                new Part("read-write lock", SqlScripts.render("rwlock_schema.sql", PostgresReadWriteStore.names(options), true)),
                new Part("task queue", SqlScripts.render("task_schema.sql", PostgresTaskStore.names(options), true)),
                new Part("fenced values", SqlScripts.render("fenced_values_schema.sql", PostgresFencedValues.names(options), true)));
    }

    /**
     * @param options the names of the schema, tables and sequence
     * @return every object of every concept
     */
    static ExpectedSchema expected(PostgresLockOptions options) {
        return ExpectedSchema.of(parts(options).stream().map(Part::script).toArray(String[]::new));
    }

    /**
     * @param options the names of the schema, tables and sequence
     * @param header  comment lines to put first (each starting with {@code --})
     * @return one plain SQL file creating the whole schema: the header, then each part under a title (without the
     *         template's first comment block, which lists the placeholders)
     */
    static String ddl(PostgresLockOptions options, String header) {
        StringBuilder sql = new StringBuilder(header.strip()).append("\n");
        for (Part part : parts(options)) {
            sql.append("\n-- ").append("=".repeat(96)).append("\n-- ").append(part.concept()).append("\n-- ")
                    .append("=".repeat(96)).append("\n\n").append(withoutHeader(part.script())).append("\n");
        }
        return sql.toString();
    }

    /** A template without its first comment block, which lists its placeholders (filled in here). */
    private static String withoutHeader(String script) {
        String[] lines = script.strip().split("\n", -1);
        int first = 0;
        while (first < lines.length && lines[first].startsWith("--")) {
            first++;
        }
        return String.join("\n", java.util.Arrays.copyOfRange(lines, first, lines.length)).strip();
    }

    /**
     * One concept's schema script.
     *
     * @param concept its name, e.g. "semaphore"
     * @param script  the rendered script (idempotent, comments kept)
     */
    record Part(String concept, String script) {
    }
}
