package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * One real PostgreSQL (from {@link PostgresServer}: Debian binaries, started as the postgres OS
 * user) shared by the test classes that do not hurt it; each class works in its own schema.
 * Classes that kill or reconfigure the server start their own. Blocking helpers are for test
 * threads only.
 */
final class PostgresTestSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static PostgresServer shared;

    private PostgresTestSupport() {
    }

    /**
     * @return the shared server, started on first use with {@code pg_stat_statements} loaded (for
     *         {@link PostgresRequestCountTest}; it costs a counter update per statement) and room for
     *         20,000 statements in it (every test class's schema makes statements of its own: at the default
     *         5,000 the extension would evict the least used, which could take a counted one); it dies with
     *         the JVM (the fixture's shutdown hook)
     */
    static synchronized PostgresServer shared() {
        if (shared == null) {
            shared = PostgresServer.builder().setting("shared_preload_libraries", "pg_stat_statements")
                    .setting("pg_stat_statements.max", "20000").start();
        }
        return shared;
    }

    /** @return an unpooled r2dbc-postgresql factory for {@code pg} */
    static PostgresqlConnectionFactory factory(PostgresServer pg) {
        return factory(pg, pg.username(), pg.password(), pg.host(), pg.port());
    }

    static PostgresqlConnectionFactory factory(PostgresServer pg, String user, String password, String host, int port) {
        return factory(pg, pg.database(), user, password, host, port);
    }

    /** @return an unpooled r2dbc-postgresql factory for one database of {@code pg} */
    static PostgresqlConnectionFactory factory(PostgresServer pg, String database) {
        return factory(pg, database, pg.username(), pg.password(), pg.host(), pg.port());
    }

    private static PostgresqlConnectionFactory factory(PostgresServer pg, String database, String user, String password,
                                                       String host, int port) {
        return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host(host)
                .port(port)
                .username(user)
                .password(password)
                .database(database)
                .connectTimeout(Duration.ofSeconds(3))
                .applicationName("reactive-locks-test")
                .build());
    }

    /** Runs one statement with {@code $n} parameters and returns its rows as maps (test threads only). */
    static List<Map<String, Object>> sql(ConnectionFactory factory, String sql, Object... args) {
        List<Map<String, Object>> rows = Flux.usingWhen(factory.create(), c -> {
            var st = c.createStatement(sql);
            for (int i = 0; i < args.length; i++) {
                st.bind(i, args[i]);
            }
            return Flux.from(st.execute()).concatMap(r -> r.map((row, md) -> {
                Map<String, Object> m = new LinkedHashMap<>();
                for (var col : md.getColumnMetadatas()) {
                    m.put(col.getName(), row.get(col.getName()));
                }
                return m;
            }));
        }, Connection::close).collectList().block(TIMEOUT);
        return rows == null ? new ArrayList<>() : rows;
    }

    /** Runs statements without parameters (simple query; test threads only). */
    static void exec(ConnectionFactory factory, String sql) {
        exec(factory, sql, TIMEOUT);
    }

    /** Runs statements without parameters (simple query; test threads only), waiting at most {@code timeout}. */
    static void exec(ConnectionFactory factory, String sql, Duration timeout) {
        Flux.usingWhen(factory.create(), c -> Flux.from(c.createStatement(sql).execute()).concatMap(r -> r.getRowsUpdated()),
                Connection::close).blockLast(timeout);
    }

    /** @return the number of rows of {@code schema.table} */
    static long count(ConnectionFactory factory, String schema, String table) {
        return ((Number) sql(factory, "SELECT count(*) AS n FROM " + SqlIdentifiers.qualified(schema, table))
                .get(0).get("n")).longValue();
    }

    /**
     * The rows of a lock table that an owner left: held, or expired and never released. A release
     * leaves the row freed (owner {@code ''}) for the name's next grant; {@code purgeExpired} deletes
     * those, see {@link #countAfterPurge}.
     */
    static long owned(ConnectionFactory factory, String schema, String table) {
        return ((Number) sql(factory, "SELECT count(*) AS n FROM " + SqlIdentifiers.qualified(schema, table)
                + " WHERE owner <> ''").get(0).get("n")).longValue();
    }

    /**
     * Purges every free row of the lock table that nobody watches and counts what is left: zero when
     * nothing is held, no owner left a row, and no client watches a name any more.
     */
    static long countAfterPurge(ConnectionFactory factory, PostgresLockOptions options) {
        PostgresLockBackend b = PostgresLockBackend.create(factory, options);
        try {
            b.purgeExpired(java.time.Duration.ZERO).block(TIMEOUT);
        } finally {
            b.close().block(TIMEOUT);
        }
        return ((Number) sql(factory, "SELECT count(*) AS n FROM " + SqlIdentifiers.qualified(options.schema(), options.table())
                + " WHERE watched_until <= now()").get(0).get("n")).longValue();
    }
}
