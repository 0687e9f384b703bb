package io.reactivelocks.r2dbc;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Readable;
import io.r2dbc.spi.Statement;
import io.reactivelocks.fencing.Fencing;
import io.reactivelocks.fencing.StaleTokenException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The most common fenced resource: rows of an application table that carry the fencing token of
 * their last writer in a {@code bigint} column ({@code fence} by default), on PostgreSQL or
 * MariaDB/MySQL. A write is one conditional {@code UPDATE},
 *
 * <pre>{@code
 * UPDATE table SET col = ?, ..., fence = :token WHERE key = :key AND (fence IS NULL OR fence <= :token)
 * }</pre>
 *
 * on the library's one fencing rule ({@link Fencing#admits}): the row keeps the highest token it
 * has accepted; a writer whose lease was lost (a paused process, a lease that expired while the
 * write was in flight) and whose token has since been superseded is refused by the database
 * itself — the guarantee the lock alone cannot give (Kleppmann) — and changes nothing, while the
 * holder of the current lease may write the row as often as it needs under its one token.
 *
 * <pre>{@code
 * FencedWrites accounts = FencedWrites.of(pool, "accounts", "id");
 * locks.withLock("account:" + id, lease -> accounts.write(id, "balance", newBalance, lease.token()))
 *      .onErrorResume(StaleTokenException.class, stale -> ...);   // a newer holder has written
 * }</pre>
 *
 * <p>A write has three outcomes: it completes (the row now carries the values and the token),
 * errors with {@link StaleTokenException} (the row carries a higher token, read in the same
 * statement on PostgreSQL, by a second one on MariaDB; the row is unchanged), or errors with
 * {@link MissingRowException} (no row has the key: this helper never inserts, the row is the
 * application's). The key should identify one row (a primary key or a unique column).
 *
 * <p>Table and column names are checked as SQL identifiers and quoted in the {@link SqlDialect}'s
 * way; the key, the values and the token are bind parameters. From a Spring application, build one
 * over its {@code DatabaseClient} with {@link SpringFencedWrites}, so writes join the caller's
 * transaction. For a fenced key/value resource kept by the lock store itself, use a session's
 * {@code fencedValues()} instead.
 *
 * <p>Immutable and thread-safe; {@code in}/{@code fenceColumn} return changed copies.
 */
public final class FencedWrites {

    /** How often a write runs again when the row changed between its statements (never with monotonic fences). */
    private static final int ATTEMPTS = 3;

    private final ConnectionSource connections;
    private final SqlDialect dialect;
    private final @Nullable String schema;
    private final String table;
    private final String keyColumn;
    private final String fenceColumn;

    FencedWrites(ConnectionSource connections, SqlDialect dialect, @Nullable String schema, String table,
                 String keyColumn, String fenceColumn) {
        this.connections = connections;
        this.dialect = dialect;
        this.schema = schema;
        this.table = table;
        this.keyColumn = keyColumn;
        this.fenceColumn = fenceColumn;
    }

    /**
     * Fenced writes on a table, in the dialect of the connection factory's driver
     * ({@link SqlDialect#of}).
     *
     * @param connections the application's connection factory (a pool, ideally)
     * @param table       the table; an SQL identifier, resolved as the connection resolves unqualified names
     * @param keyColumn   the column identifying a row; an SQL identifier
     * @return fenced writes on {@code table} with the fence in column {@code fence}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is not an SQL identifier (the message names the
     *                                  argument), or the driver's dialect is not known
     */
    public static FencedWrites of(ConnectionFactory connections, String table, String keyColumn) {
        return of(connections, SqlDialect.of(connections), table, keyColumn);
    }

    /**
     * Fenced writes on a table, in a dialect named explicitly.
     *
     * @param connections the application's connection factory (a pool, ideally)
     * @param dialect     the SQL dialect of its database
     * @param table       the table; an SQL identifier
     * @param keyColumn   the column identifying a row; an SQL identifier
     * @return fenced writes on {@code table} with the fence in column {@code fence}
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when a name is not an SQL identifier (the message names the argument)
     */
    public static FencedWrites of(ConnectionFactory connections, SqlDialect dialect, String table, String keyColumn) {
        return of(ConnectionSource.of(Objects.requireNonNull(connections, "connections")), dialect, table, keyColumn);
    }

    static FencedWrites of(ConnectionSource connections, SqlDialect dialect, String table, String keyColumn) {
        return new FencedWrites(connections, Objects.requireNonNull(dialect, "dialect"), null,
                SqlDialect.check(table, "table"), SqlDialect.check(keyColumn, "keyColumn"), "fence");
    }

    /**
     * @param schema the schema of the table (MariaDB: its database); an SQL identifier
     * @return a copy that qualifies the table with {@code schema}
     * @throws NullPointerException     when {@code schema} is null
     * @throws IllegalArgumentException when it is not an SQL identifier
     */
    public FencedWrites in(String schema) {
        return new FencedWrites(connections, dialect, SqlDialect.check(schema, "schema"), table, keyColumn, fenceColumn);
    }

    /**
     * @param fenceColumn the {@code bigint} column holding the last writer's token; an SQL identifier
     * @return a copy using that column
     * @throws NullPointerException     when {@code fenceColumn} is null
     * @throws IllegalArgumentException when it is not an SQL identifier
     */
    public FencedWrites fenceColumn(String fenceColumn) {
        return new FencedWrites(connections, dialect, schema, table, keyColumn, SqlDialect.check(fenceColumn, "fenceColumn"));
    }

    /** @return the dialect the statements are written in */
    public SqlDialect dialect() {
        return dialect;
    }

    /**
     * Writes one column of the row {@code key} if {@link Fencing#admits} {@code token} against the
     * row's fence; see {@link #write(Object, Map, long)}.
     *
     * @param key    the row's key value (bound)
     * @param column the column to set; an SQL identifier
     * @param value  the value (bound); not null
     * @param token  the writer's fencing token, e.g. {@code lease.token()}
     * @return completes when written; errors with {@link StaleTokenException} when refused,
     *         {@link MissingRowException} when there is no such row
     * @throws NullPointerException     when the key, the column or the value is null
     * @throws IllegalArgumentException when the column is not an SQL identifier, or is the key or the fence column
     */
    public Mono<Void> write(Object key, String column, Object value, long token) {
        SqlDialect.check(column, "column");
        Objects.requireNonNull(value, "value");
        return write(key, Map.of(column, value), token);
    }

    /**
     * Writes columns of the row {@code key} if {@link Fencing#admits} {@code token} against the
     * row's fence (equal or greater; a {@code NULL} fence admits any token), and stores
     * {@code token} as the new fence — in one statement, so the check and the write are atomic. On
     * subscribe it takes a connection and runs; cancel gives the connection back (a statement already
     * sent still completes). The driver's errors ({@code R2dbcException}) pass unchanged: this is the
     * application's table, not the lock store.
     *
     * @param key     the row's key value (bound)
     * @param columns the columns to set and their values (bound; not null); at least one; iteration order is kept
     * @param token   the writer's fencing token, e.g. {@code lease.token()}
     * @return completes when written; errors with {@link StaleTokenException} (carrying {@code token}
     *         and the row's fence) when the row carries a greater token — the row is unchanged — and with
     *         {@link MissingRowException} when no row has the key
     * @throws NullPointerException     when the key, the map, a column or a value is null
     * @throws IllegalArgumentException when there is no column, a column is not an SQL identifier,
     *                                  or a column is the key or the fence column
     */
    public Mono<Void> write(Object key, Map<String, ?> columns, long token) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(columns, "columns");
        if (columns.isEmpty()) {
            throw new IllegalArgumentException("columns must not be empty");
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (Map.Entry<String, ?> e : columns.entrySet()) {
            String c = SqlDialect.check(e.getKey(), "column");
            if (c.equals(keyColumn) || c.equals(fenceColumn)) {
                throw new IllegalArgumentException("column must not be the key or the fence column, was '" + c + "'");
            }
            values.put(c, Objects.requireNonNull(e.getValue(), "value of column " + c));
        }
        String update = updateSql(new ArrayList<>(values.keySet()));
        List<Object> binds = new ArrayList<>(values.values());
        binds.add(token);
        binds.add(key);
        if (dialect == SqlDialect.MARIADB) {
            binds.add(token);     // positional markers: the token's second use is bound again
        }
        return connections.withConnection(c -> attempt(c, update, binds, key, token, 1)).then();
    }

    /** One attempt: the update and, when it wrote nothing, why not. */
    private Mono<Void> attempt(Connection c, String update, List<Object> binds, Object key, long token, int n) {
        Mono<RowState> afterUpdate = dialect == SqlDialect.POSTGRESQL
                ? Flux.from(bind(c.createStatement(update), binds).execute())
                        .concatMap(r -> r.map(FencedWrites::state)).last()
                : Flux.from(bind(c.createStatement(update), binds).execute())
                        .concatMap(r -> r.getRowsUpdated()).reduce(0L, Long::sum)
                        .flatMap(written -> written > 0 ? Mono.just(new RowState(written, 1, null)) : read(c, key));
        return afterUpdate.flatMap(s -> {
            if (s.written() > 0) {
                return Mono.empty();
            }
            if (s.found() == 0) {
                return Mono.error(new MissingRowException(name(), String.valueOf(key)));
            }
            if (s.fence() != null && !Fencing.admits(s.fence(), token)) {
                return Mono.error(new StaleTokenException(name() + "[" + keyColumn + "=" + key + "]", token,
                        OptionalLong.of(s.fence())));
            }
            if (dialect.countsChangedRowsOnly() && s.fence() != null && s.fence() == token) {
                return Mono.empty();    // the same values under the same token: matched, left as they were
            }
            // admitted by the fence now read, yet not written: the row changed between the statements
            if (n < ATTEMPTS) {
                return attempt(c, update, binds, key, token, n + 1);
            }
            return Mono.error(new IllegalStateException("the row " + name() + "[" + keyColumn + "=" + key
                    + "] changed under " + ATTEMPTS + " fenced writes in a row (is its fence written outside FencedWrites?)"));
        });
    }

    private Mono<RowState> read(Connection c, Object key) {
        return Flux.from(c.createStatement(readSql()).bind(0, key).execute())
                .concatMap(r -> r.map(row -> new RowState(0, number(row, "found"), nullableNumber(row, "fence"))))
                .last();
    }

    private static RowState state(Readable row) {
        return new RowState(number(row, "written"), number(row, "found"), nullableNumber(row, "fence"));
    }

    private static long number(Readable row, String name) {
        Long n = nullableNumber(row, name);
        return n == null ? 0 : n;
    }

    private static @Nullable Long nullableNumber(Readable row, String name) {
        Object v = row.get(name);
        return v == null ? null : ((Number) v).longValue();
    }

    private static Statement bind(Statement st, List<Object> binds) {
        for (int i = 0; i < binds.size(); i++) {
            st.bind(i, binds.get(i));
        }
        return st;
    }

    /** What a statement saw: rows written, rows with the key, and their highest fence. */
    private record RowState(long written, long found, @Nullable Long fence) {
    }

    /**
     * The write: on PostgreSQL the update in a data-modifying {@code WITH}, whose outer query reads
     * the row's fence from the statement's snapshot in the same round trip; on MariaDB the update alone.
     *
     * @return the statement for these columns
     */
    private String updateSql(List<String> columns) {
        String target = target();
        String fence = dialect.quote(fenceColumn);
        String key = dialect.quote(keyColumn);
        StringBuilder set = new StringBuilder();
        int p = 0;
        for (String c : columns) {
            set.append(dialect.quote(c)).append(" = ").append(dialect.bindMarker(p++)).append(", ");
        }
        String tokenMarker = dialect.bindMarker(p++);
        String keyMarker = dialect.bindMarker(p++);
        String secondToken = dialect == SqlDialect.POSTGRESQL ? tokenMarker : dialect.bindMarker(p);
        String update = "UPDATE " + target + " SET " + set + fence + " = " + tokenMarker
                + " WHERE " + key + " = " + keyMarker + " AND (" + fence + " IS NULL OR " + fence + " <= " + secondToken + ")";
        if (dialect == SqlDialect.MARIADB) {
            return update;
        }
        // the CTE's name cannot be a checked identifier (it has a space), so it never hides the table
        return "WITH \"fenced write\" AS (" + update + " RETURNING 1)"
                + " SELECT (SELECT count(*) FROM \"fenced write\") AS written, count(*) AS found, max(" + fence + ") AS fence"
                + " FROM " + target + " WHERE " + key + " = " + keyMarker;
    }

    /** @return the statement that reads the rows with a key and their highest fence */
    private String readSql() {
        return "SELECT COUNT(*) AS found, MAX(" + dialect.quote(fenceColumn) + ") AS fence FROM " + target()
                + " WHERE " + dialect.quote(keyColumn) + " = " + dialect.bindMarker(0);
    }

    private String target() {
        return schema == null ? dialect.quote(table) : dialect.quote(schema) + '.' + dialect.quote(table);
    }

    private String name() {
        return schema == null ? table : schema + "." + table;
    }

    @Override
    public String toString() {
        return "FencedWrites{" + dialect + " " + name() + " by " + keyColumn
                + ", fence " + fenceColumn + "}";
    }
}
