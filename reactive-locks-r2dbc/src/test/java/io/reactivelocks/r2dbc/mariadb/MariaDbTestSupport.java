package io.reactivelocks.r2dbc.mariadb;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.test.server.MariaDbServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import reactor.core.publisher.Flux;

/**
 * One real MariaDB (from {@link MariaDbServer}: the Debian binaries, started as the mysql OS user)
 * shared by every MariaDB test class of the JVM; each class works in a database of its own. Blocking
 * helpers are for test threads only.
 */
final class MariaDbTestSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static MariaDbServer shared;

    private MariaDbTestSupport() {
    }

    /** @return the shared server, started on first use; it dies with the JVM (the fixture's shutdown hook) */
    static synchronized MariaDbServer shared() {
        if (shared == null) {
            shared = MariaDbServer.start();
        }
        return shared;
    }

    /** @return an unpooled r2dbc-mariadb factory for the shared server's test database */
    static ConnectionFactory factory() {
        return factory(shared());
    }

    /**
     * @param db a server, the shared one or a test class's own (one whose status counters only that class moves)
     * @return an unpooled r2dbc-mariadb factory for its test database
     */
    static ConnectionFactory factory(MariaDbServer db) {
        return factory(db, db.host(), db.port());
    }

    /** @return a factory for the shared server's test database at another address (a proxy in front of it) */
    static ConnectionFactory factory(String host, int port) {
        return factory(shared(), host, port);
    }

    private static ConnectionFactory factory(MariaDbServer db, String host, int port) {
        return MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder()
                .host(host)
                .port(port)
                .username(db.username())
                .password(db.password())
                .database(db.database())
                .connectTimeout(Duration.ofSeconds(3))
                .build());
    }

    /**
     * @param name a database for one test class
     * @return options for the store in that database (created if missing), polling every 50 ms
     */
    static MariaDbLockOptions options(String name) {
        exec("CREATE DATABASE IF NOT EXISTS `" + name + "`");
        return MariaDbLockOptions.builder().database(name).poolMaxSize(4).pollInterval(Duration.ofMillis(50)).build();
    }

    /** Runs one statement with {@code ?} parameters and returns its rows as maps (test threads only). */
    static List<Map<String, Object>> sql(String sql, Object... args) {
        return sql(factory(), sql, args);
    }

    /** Runs one statement with {@code ?} parameters on {@code factory}'s server and returns its rows as maps (test threads only). */
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

    /** Runs one statement without parameters (test threads only). */
    static void exec(String sql) {
        exec(factory(), sql);
    }

    /** Runs one statement without parameters on {@code factory}'s server (test threads only). */
    static void exec(ConnectionFactory factory, String sql) {
        Flux.usingWhen(factory.create(), c -> Flux.from(c.createStatement(sql).execute()).concatMap(r -> r.getRowsUpdated()),
                Connection::close).blockLast(TIMEOUT);
    }

    /** @return the number of rows of {@code database.table} */
    static long count(String database, String table) {
        return ((Number) sql("SELECT COUNT(*) AS n FROM `" + database + "`.`" + table + "`").get(0).get("n")).longValue();
    }
}
