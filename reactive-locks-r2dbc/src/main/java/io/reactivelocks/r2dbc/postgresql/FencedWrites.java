package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Statement;
import io.reactivelocks.fencing.Fencing;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The most common fenced resource: rows of an application table that carry the fencing token of
 * their last writer in a {@code bigint} column ({@code fence} by default). A write is one
 * statement,
 *
 * <pre>{@code
 * UPDATE "schema"."table" SET "col" = $1, ..., "fence" = $n WHERE "key" = $k AND ("fence" IS NULL OR "fence" <= $n)
 * }</pre>
 *
 * on the library's one fencing rule ({@link Fencing#admits}): a writer whose lease was lost (a
 * paused process, a lease that expired while the write was in flight) and whose token has since
 * been superseded is rejected by the database itself — the guarantee the lock alone cannot give
 * (Kleppmann) — while the holder of the current lease may write the row as often as it needs
 * under its one token. Table and column names are checked as SQL
 * identifiers; the key, the values and the token are bind parameters.
 *
 * <pre>{@code
 * FencedWrites accounts = FencedWrites.of(pool, "accounts", "id");
 * locks.withLock("account:" + id, lease -> accounts.write(id, "balance", newBalance, lease.token()))
 *      .flatMap(accepted -> accepted ? Mono.just(ok) : Mono.error(new StaleWriteException()));
 * }</pre>
 *
 * <p>This helper writes columns of an application's own rows (it never inserts: the row is the
 * application's), so it is not a {@link io.reactivelocks.fencing.FencedValues}; for a fenced
 * key/value resource on PostgreSQL use a session's {@link PostgresLockStore#fencedValues()}.
 *
 * <p>Immutable and thread-safe; {@code in}/{@code fenceColumn} return changed copies.
 */
public final class FencedWrites {

    private final ConnectionFactory connections;
    private final String schema;        // null: the search_path decides
    private final String table;
    private final String keyColumn;
    private final String fenceColumn;

    private FencedWrites(ConnectionFactory connections, String schema, String table, String keyColumn, String fenceColumn) {
        this.connections = connections;
        this.schema = schema;
        this.table = table;
        this.keyColumn = keyColumn;
        this.fenceColumn = fenceColumn;
    }

    /**
     * @param connections the application's connection factory (a pool, ideally)
     * @param table       the table; an SQL identifier, resolved through the {@code search_path}
     * @param keyColumn   the column identifying a row; an SQL identifier
     * @return fenced writes on {@code table} with the fence in column {@code fence}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is not an SQL identifier (the message names the argument)
     */
    public static FencedWrites of(ConnectionFactory connections, String table, String keyColumn) {
        return new FencedWrites(Objects.requireNonNull(connections, "connections"), null,
                SqlIdentifiers.check(table, "table"), SqlIdentifiers.check(keyColumn, "keyColumn"), "fence");
    }

    /**
     * @param schema the schema of the table; an SQL identifier
     * @return a copy that qualifies the table with {@code schema}
     */
    public FencedWrites in(String schema) {
        return new FencedWrites(connections, SqlIdentifiers.check(schema, "schema"), table, keyColumn, fenceColumn);
    }

    /**
     * @param fenceColumn the {@code bigint} column holding the last writer's token; an SQL identifier
     * @return a copy using that column
     */
    public FencedWrites fenceColumn(String fenceColumn) {
        return new FencedWrites(connections, schema, table, keyColumn, SqlIdentifiers.check(fenceColumn, "fenceColumn"));
    }

    /**
     * Writes one column of the row {@code key} if {@link Fencing#admits} {@code token} against the
     * row's fence (at least the fence).
     *
     * @param key    the row's key value (bound)
     * @param column the column to set; an SQL identifier
     * @param value  the value (bound); not null
     * @param token  the writer's fencing token, e.g. {@code lease.token()}
     * @return see {@link #write(Object, Map, long)}
     */
    public Mono<Boolean> write(Object key, String column, Object value, long token) {
        SqlIdentifiers.check(column, "column");
        Objects.requireNonNull(value, "value");
        return write(key, Map.of(column, value), token);
    }

    /**
     * Writes columns of the row {@code key} if {@link Fencing#admits} {@code token} against the
     * row's fence (equal or greater; a {@code NULL} fence accepts any token), and stores
     * {@code token} as the new fence — in one
     * statement, so the check and the write are atomic. On subscribe it runs once; cancel returns
     * the connection (a statement already sent still completes); errors are the driver's
     * {@code R2dbcException}s, unchanged (this is the application's table, not the lock store).
     *
     * @param key     the row's key value (bound)
     * @param columns the columns to set and their values (bound; not null); at least one; iteration order is kept
     * @param token   the writer's fencing token, e.g. {@code lease.token()}
     * @return {@code true} when the write was accepted, {@code false} when the row carries a
     *         greater token (a newer writer got there) or does not exist
     * @throws NullPointerException     when the key, the map, a column or a value is null
     * @throws IllegalArgumentException when there is no column, a column is not an SQL identifier,
     *                                  or a column is the key or the fence column
     */
    public Mono<Boolean> write(Object key, Map<String, ?> columns, long token) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(columns, "columns");
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("columns must not be empty");
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, ?> e : columns.entrySet()) {
            String c = SqlIdentifiers.check(e.getKey(), "column");
            if (c.equals(keyColumn) || c.equals(fenceColumn)) {
                throw new IllegalArgumentException("column must not be the key or the fence column, was '" + c + "'");
            }
            values.put(c, Objects.requireNonNull(e.getValue(), "value of column " + c));
        }
        String sql = updateSql(new ArrayList<>(values.keySet()));
        List<Object> binds = new ArrayList<>(values.values());
        return Flux.usingWhen(connections.create(), c -> {
                    Statement st = c.createStatement(sql);
                    int i = 0;
                    for (Object v : binds) {
                        st.bind(i++, v);
                    }
                    st.bind(i++, token);
                    st.bind(i, key);
                    return Flux.from(st.execute()).concatMap(r -> r.getRowsUpdated());
                }, Connection::close)
                .reduce(0L, Long::sum)
                .map(n -> n > 0);
    }

    /** @return the statement for these columns (visible for tests) */
    String updateSql(List<String> columns) {
        String target = schema == null ? SqlIdentifiers.quote(table) : SqlIdentifiers.qualified(schema, table);
        String fence = SqlIdentifiers.quote(fenceColumn);
        StringBuilder sql = new StringBuilder("UPDATE ").append(target).append(" SET ");
        int p = 1;
        for (String c : columns) {
            sql.append(SqlIdentifiers.quote(c)).append(" = $").append(p++).append(", ");
        }
        int tokenParam = p++;
        sql.append(fence).append(" = $").append(tokenParam)
                .append(" WHERE ").append(SqlIdentifiers.quote(keyColumn)).append(" = $").append(p)
                .append(" AND (").append(fence).append(" IS NULL OR ").append(fence).append(" <= $").append(tokenParam).append(')');
        return sql.toString();
    }

    @Override
    public String toString() {
        return "FencedWrites{" + (schema == null ? "" : schema + ".") + table + " by " + keyColumn + ", fence " + fenceColumn + "}";
    }
}
