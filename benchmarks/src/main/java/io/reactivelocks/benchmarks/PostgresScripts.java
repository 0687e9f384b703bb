package io.reactivelocks.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The PostgreSQL backend's statements as it renders them for the default names (whole-line comments dropped),
 * for the benchmarks that send or parse them raw: B1's floor and {@link SqlParseBenchmark}.
 */
public final class PostgresScripts {

    private PostgresScripts() {
    }

    /**
     * @param resource a script next to the backend's classes, e.g. {@code acquire_row.sql}
     * @return its statement text with the default table, sequence and function names
     */
    public static String render(String resource) {
        String text;
        try (InputStream in = PostgresScripts.class.getResourceAsStream("/io/reactivelocks/r2dbc/postgresql/" + resource)) {
            if (in == null) {
                throw new IllegalStateException("no script " + resource);
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        StringBuilder sql = new StringBuilder();
        for (String line : text.split("\n")) {
            if (!line.isBlank() && !line.stripLeading().startsWith("--")) {
                sql.append(line).append('\n');
            }
        }
        return sql.toString().trim()
                .replace("${table}", "\"public\".\"reactive_locks\"")
                .replace("${sequence}", "\"public\".\"reactive_locks_token_seq\"")
                .replace("${notify_fn}", "\"public\".\"reactive_locks_notify\"")
                .replace("${watcher_table}", "\"public\".\"reactive_locks_watchers\"");
    }
}
