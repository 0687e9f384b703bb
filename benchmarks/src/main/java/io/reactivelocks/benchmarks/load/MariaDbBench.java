package io.reactivelocks.benchmarks.load;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Statement;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockBackend;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.server.MariaDbServer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * MariaDB: the raw r2dbc-mariadb floor (our grant and release statements, same binds,
 * same pool settings), reactive-locks, ShedLock's R2DBC provider on its MariaDB dialect (a blocking
 * tryLock: B1 only) and the simplest upsert lock. Every contender gets its own r2dbc-pool of
 * {@value #POOL_SIZE} connections. Requests are counted by the server ({@code Questions} of
 * {@code SHOW GLOBAL STATUS}), so the statements the driver sends on its own (transaction control)
 * are counted too. B8 has no anchor on MariaDB: its rows are ours only.
 */
final class MariaDbBench extends BackendBench {

    static final int POOL_SIZE = 16;

    private MariaDbServer server;
    private ConnectionFactory base;
    private ConnectionPool probe;

    MariaDbBench() {
        super("mariadb", "MariaDB");
    }

    @Override
    void start() {
        server = MariaDbServer.start();
        base = ConnectionFactories.get(ConnectionFactoryOptions.parse(server.r2dbcUrl()));
        probe = new ConnectionPool(ConnectionPoolConfiguration.builder(base).initialSize(1).maxSize(1).build());
        // the schema, once (ours would create it on first use; the floor needs it too)
        MariaDbLockBackend b = MariaDbLocks.backend(probe, MariaDbLockOptions.defaults());
        b.migrate().block(Duration.ofSeconds(60));
        // ShedLock's documented MySQL/MariaDB table
        execute("CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,"
                + " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL,"
                + " PRIMARY KEY (name))");
    }

    /**
     * Runs one statement on the admin connection (the calling thread waits).
     *
     * @param sql  the statement, with {@code ?} parameters
     * @param args their values
     */
    void execute(String sql, Object... args) {
        Flux.usingWhen(probe.create(), c -> {
            Statement st = c.createStatement(sql);
            for (int i = 0; i < args.length; i++) {
                st.bind(i, args[i]);
            }
            return Flux.from(st.execute()).concatMap(r -> r.getRowsUpdated());
        }, Connection::close).blockLast(Duration.ofSeconds(30));
    }

    /** @return a new pool of {@value #POOL_SIZE} connections, all open */
    ConnectionPool pool() {
        ConnectionPool p = new ConnectionPool(ConnectionPoolConfiguration.builder(base)
                .initialSize(POOL_SIZE).maxSize(POOL_SIZE).maxIdleTime(Duration.ofMinutes(30)).build());
        p.warmup().block(Duration.ofSeconds(30));
        return p;
    }

    @Override
    List<Contender> contenders() {
        return List.of(new Raw(pool()), ours(pool()), new PostgresBench.ShedLock("mariadb", pool()),
                new SimpleLocks.MariaDb(pool()), new RawHandoffs.MariaDb(pool()));
    }

    /** B8: ours only (no anchor on MariaDB): the semaphore, both sides of the read-write lock, the fair lock. */
    @Override
    List<Primitives.Group> primitives() {
        return List.of(
                new Primitives.Group("sem", "semaphore (c workers on one name, N = max(1, c/2))", true, true, true, List.of(
                        session((store, driver) -> OursPrimitive.semaphore("mariadb", store.semaphores(LockOptions.defaults()), driver)))),
                new Primitives.Group("read", "read-write lock, read side (c readers on one name)", true, false, false, List.of(
                        session((store, driver) -> OursPrimitive.read("mariadb", store.readWriteLocks(LockOptions.defaults()), driver)))),
                new Primitives.Group("write", "read-write lock, write side (a name per worker)", false, false, true, List.of(
                        session((store, driver) -> OursPrimitive.write("mariadb", store.readWriteLocks(LockOptions.defaults()), driver)))),
                new Primitives.Group("fair", "fair lock (a name per worker)", false, false, true, List.of(
                        session((store, driver) -> OursPrimitive.fair("mariadb", store.fairLocks(LockOptions.defaults()), driver)))));
    }

    /**
     * One of ours on a store session of its own over a pool of its own.
     *
     * @param make builds the contender from the session and what closes the session, then the pool
     * @return the contender
     */
    private Contender session(BiFunction<LockStore, AutoCloseable, Contender> make) {
        ConnectionPool p = pool();
        LockStore store = MariaDbLocks.connect(p, MariaDbLockOptions.defaults());
        return make.apply(store, OursPrimitive.closing(store, () -> p.close().block(Duration.ofSeconds(10))));
    }

    /** reactive-locks on MariaDB, defaults, on a pool it is given (closed with it). */
    static Contender ours(ConnectionPool pool) {
        MariaDbLockBackend backend = MariaDbLocks.backend(pool, MariaDbLockOptions.defaults());
        return new Ours("mariadb", LockClient.create(backend, LockOptions.defaults()),
                () -> pool.close().block(Duration.ofSeconds(10)));
    }

    @Override
    Counts counts() {
        Long questions = Flux.usingWhen(probe.create(),
                c -> Flux.from(c.createStatement("SHOW GLOBAL STATUS LIKE 'Questions'").execute())
                        .concatMap(r -> r.map((row, md) -> Long.parseLong(String.valueOf(row.get(1))))),
                Connection::close).blockFirst(Duration.ofSeconds(10));
        if (questions == null) {
            throw new IllegalStateException("SHOW GLOBAL STATUS returned no Questions");
        }
        return new Counts(questions, -1);
    }

    @Override
    String counterDescription() {
        return "statements the server received from clients (`Questions` of `SHOW GLOBAL STATUS`, read before and after; "
                + "it counts the transaction control the driver sends — `START TRANSACTION`, `COMMIT` — and each "
                + "`SHOW GLOBAL STATUS` itself, which B3 subtracts); each is one round trip";
    }

    @Override
    Histogram roundTrip(int samples) {
        Histogram h = new Histogram(3);
        Flux.range(0, samples).concatMap(i -> {
            long t0 = System.nanoTime();
            return PostgresBench.sql(probe, "SELECT 1", row -> 1).doOnNext(x -> h.recordValue(System.nanoTime() - t0));
        }).blockLast(Duration.ofMinutes(1));
        return h;
    }

    @Override
    String roundTripDescription() {
        return "`SELECT 1` on a pooled r2dbc-mariadb connection";
    }

    @Override
    Map<String, String> serverInfo() {
        Map<String, String> m = info();
        m.put("version", first("SELECT VERSION()"));
        m.put("durability", "innodb_flush_log_at_trx_commit=" + first("SELECT @@innodb_flush_log_at_trx_commit")
                + ", sync_binlog=" + first("SELECT @@sync_binlog") + ", log_bin=" + first("SELECT @@log_bin")
                + ", transaction_isolation=" + first("SELECT @@tx_isolation"));
        m.put("memory", "innodb_buffer_pool_size=" + first("SELECT @@innodb_buffer_pool_size") + ", max_connections="
                + first("SELECT @@max_connections"));
        m.put("command line", commandLine(server.pid()));
        return m;
    }

    private String first(String query) {
        return PostgresBench.sql(probe, query, row -> String.valueOf(row.get(0))).blockFirst(Duration.ofSeconds(10));
    }

    @Override
    long serverPid() {
        return server.pid();
    }

    @Override
    public void close() {
        if (probe != null) {
            probe.close().block(Duration.ofSeconds(10));
            probe = null;
        }
        if (server != null) {
            server.close();
            server = null;
        }
    }

    // ------------------------------------------------------------------ contenders

    /**
     * The floor: our grant statement and release with the same binds (no lock payload: NULL), on the
     * same kind of pool — the {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING} that locks the
     * name's row and takes it with a token from the sequence ({@code acquire.sql}), autocommit; then
     * the owner-checked {@code DELETE} ({@code release.sql}). No poller, no events, no retry.
     */
    static final class Raw extends Contender {
        private static final long TTL_US = Duration.ofSeconds(30).toNanos() / 1000;
        private final ConnectionPool pool;
        private final String acquire;
        private final String release;

        Raw(ConnectionPool pool) {
            super("mariadb", "raw", "raw r2dbc-mariadb statements (floor)", Role.FLOOR);
            this.pool = pool;
            this.acquire = render("acquire.sql");
            this.release = render("release.sql");
        }

        /** Our statement text as MariaDbLockBackend renders it for the default table and sequence. */
        static String render(String resource) {
            String text = RedisBench.resource("io/reactivelocks/r2dbc/mariadb/" + resource)
                    .replace("${table}", "`reactive_locks`")
                    .replace("${sequence}", "`reactive_locks_token_seq`");
            StringBuilder sql = new StringBuilder();
            for (String line : text.split("\n")) {
                if (!line.isBlank() && !line.stripLeading().startsWith("--")) {
                    sql.append(line).append('\n');
                }
            }
            return sql.toString().trim();
        }

        private static Mono<Long> update(Connection c, String sql, Consumer<Statement> binder) {
            return Flux.defer(() -> {
                Statement st = c.createStatement(sql);
                binder.accept(st);
                return Flux.from(st.execute()).concatMap(r -> r.getRowsUpdated());
            }).reduce(0L, Long::sum);
        }

        /** The grant's token, or an error when the row is another owner's (the last RETURNING row names the holder). */
        private Mono<Long> grant(String name, String owner) {
            return Mono.usingWhen(pool.create(), c -> Flux.defer(() -> {
                Statement st = c.createStatement(acquire).bind(0, name).bind(1, name).bind(2, owner).bind(3, TTL_US)
                        .bindNull(4, String.class);
                return Flux.from(st.execute()).concatMap(r -> r.map((row, md) -> Map.entry(
                        new String(bytes(row.get("owner")), StandardCharsets.UTF_8), ((Number) row.get("token")).longValue())));
            }).last().flatMap(e -> e.getKey().equals(owner) ? Mono.just(e.getValue())
                    : Mono.<Long>error(new IllegalStateException("busy"))), Connection::close);
        }

        private static byte[] bytes(@Nullable Object v) {
            if (v instanceof byte[] b) {
                return b;
            }
            if (v instanceof ByteBuffer bb) {
                byte[] b = new byte[bb.remaining()];
                bb.duplicate().get(b);
                return b;
            }
            return String.valueOf(v).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                return grant(name, owner)
                        .then(Mono.usingWhen(pool.create(),
                                c -> update(c, release, st -> st.bind(0, name).bind(1, owner)), Connection::close))
                        .flatMap(n -> n == 1L ? Mono.<Void>empty() : Mono.error(new IllegalStateException("not released")));
            });
        }

        @Override
        public void close() {
            pool.close().block(Duration.ofSeconds(10));
        }
    }
}
