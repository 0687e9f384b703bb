package io.reactivelocks.benchmarks.load;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.test.server.PostgresServer;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.r2dbc.R2dbcLockProvider;
import org.HdrHistogram.Histogram;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * PostgreSQL: the raw R2DBC floor (our own acquire and release statements, same binds, same
 * pool settings), reactive-locks, ShedLock's R2DBC provider (a blocking tryLock: B1 only).
 * Every contender gets its own r2dbc-pool of {@value #POOL_SIZE} connections over a factory that
 * counts the statements created on its connections.
 */
final class PostgresBench extends BackendBench {

    static final int POOL_SIZE = 16;
    /** Statements created on counted connections (every contender's pool). */
    static final LongAdder STATEMENTS = new LongAdder();

    private PostgresServer server;
    private ConnectionFactory base;
    private ConnectionPool probe;

    PostgresBench() {
        super("postgres", "PostgreSQL");
    }

    @Override
    void start() {
        server = PostgresServer.start();
        base = ConnectionFactories.get(ConnectionFactoryOptions.parse(server.r2dbcUrl()));
        probe = new ConnectionPool(ConnectionPoolConfiguration.builder(base).initialSize(1).maxSize(1).build());
        // the schema, once (ours would create it on first use; the floor needs it too)
        PostgresLockBackend b = PostgresLocks.backend(probe, PostgresLockOptions.defaults());
        b.migrate().block(Duration.ofSeconds(60));
        Flux.usingWhen(probe.create(), c -> Flux.from(c.createStatement("CREATE TABLE IF NOT EXISTS shedlock("
                        + "name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL,"
                        + " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))").execute())
                .concatMap(r -> r.getRowsUpdated()), Connection::close).blockLast(Duration.ofSeconds(30));
    }

    ConnectionPool pool() {
        ConnectionPool p = new ConnectionPool(ConnectionPoolConfiguration.builder(new CountingFactory(base))
                .initialSize(POOL_SIZE).maxSize(POOL_SIZE).maxIdleTime(Duration.ofMinutes(30)).build());
        p.warmup().block(Duration.ofSeconds(30));
        return p;
    }

    ConnectionFactory unpooled() {
        return base;
    }

    /** B8: ours only (no anchor on PostgreSQL): the semaphore and the fair lock. */
    @Override
    List<Primitives.Group> primitives() {
        ConnectionPool semPool = pool();
        LockStore sem = PostgresLocks.connect(semPool, PostgresLockOptions.builder().listenerConnectionFactory(base).build());
        ConnectionPool fairPool = pool();
        LockStore fair = PostgresLocks.connect(fairPool, PostgresLockOptions.builder().listenerConnectionFactory(base).build());
        return List.of(
                new Primitives.Group("sem", "semaphore (c workers on one name, N = max(1, c/2))", true, true, true, List.of(
                        OursPrimitive.semaphore("postgres", sem.semaphores(LockOptions.defaults()), () -> {
                            sem.close().block(Duration.ofSeconds(10));
                            semPool.close().block(Duration.ofSeconds(10));
                        }))),
                new Primitives.Group("fair", "fair lock (a name per worker)", false, false, true, List.of(
                        OursPrimitive.fair("postgres", fair.fairLocks(LockOptions.defaults()), () -> {
                            fair.close().block(Duration.ofSeconds(10));
                            fairPool.close().block(Duration.ofSeconds(10));
                        }))));
    }

    @Override
    List<Contender> contenders() {
        return List.of(new Raw(pool()), ours(pool(), base), new ShedLock("postgres", pool()), new SimpleLocks.Postgres(pool()),
                new RawHandoffs.Postgres(pool(), base));
    }

    @Override
    Counts counts() {
        return new Counts(STATEMENTS.sum(), -1);
    }

    @Override
    String counterDescription() {
        return "statements sent, counted client-side on every contender's connections (`Connection.createStatement`; "
                + "pg_stat_statements is not loaded by the fixture, and pg_stat_database flushes too lazily to "
                + "attribute a 100 ms window); each is one round trip and one implicit transaction";
    }

    @Override
    Histogram roundTrip(int samples) {
        Histogram h = new Histogram(3);
        Flux.range(0, samples).concatMap(i -> {
            long t0 = System.nanoTime();
            return sql(probe, "SELECT 1", row -> 1).doOnNext(x -> h.recordValue(System.nanoTime() - t0));
        }).blockLast(Duration.ofMinutes(1));
        return h;
    }

    @Override
    String roundTripDescription() {
        return "`SELECT 1` on a pooled r2dbc-postgresql connection";
    }

    @Override
    Map<String, String> serverInfo() {
        Map<String, String> m = info();
        m.put("version", first("SELECT version()"));
        m.put("durability", "fsync=" + first("SHOW fsync") + ", synchronous_commit=" + first("SHOW synchronous_commit")
                + ", full_page_writes=" + first("SHOW full_page_writes") + ", wal_level=" + first("SHOW wal_level"));
        m.put("memory", "shared_buffers=" + first("SHOW shared_buffers") + ", max_connections=" + first("SHOW max_connections"));
        m.put("command line", commandLine(server.pid()));
        return m;
    }

    private String first(String query) {
        return sql(probe, query, row -> row.get(0, String.class)).blockFirst(Duration.ofSeconds(10));
    }

    static <T> Flux<T> sql(ConnectionFactory f, String query, Function<io.r2dbc.spi.Row, T> mapper) {
        return Flux.usingWhen(f.create(), c -> Flux.from(c.createStatement(query).execute())
                .concatMap(r -> r.map((row, md) -> mapper.apply(row))), Connection::close);
    }

    @Override
    long serverPid() {
        return server.pid();
    }

    @Override
    public void close() {
        if (probe != null) {
            probe.close().block(Duration.ofSeconds(10));
        }
        if (server != null) {
            server.close();
        }
    }

    /** Counts {@code createStatement} calls on the connections it makes. */
    static final class CountingFactory implements ConnectionFactory {
        private final ConnectionFactory delegate;

        CountingFactory(ConnectionFactory delegate) {
            this.delegate = delegate;
        }

        @Override
        public Publisher<? extends Connection> create() {
            return Mono.from(delegate.create()).map(CountingFactory::counted);
        }

        private static Connection counted(Connection c) {
            InvocationHandler h = (proxy, method, args) -> {
                if (method.getName().equals("createStatement")) {
                    STATEMENTS.increment();
                }
                try {
                    return method.invoke(c, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            };
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
        }

        @Override
        public ConnectionFactoryMetadata getMetadata() {
            return delegate.getMetadata();
        }
    }

    // ------------------------------------------------------------------ contenders

    /**
     * The floor: our statements with the same binds (no lock payload: NULL), on the same kind of
     * pool, as ours sends them: acquire_row.sql (the UPDATE of the name's row), then acquire.sql
     * when that found no free row (the first cycle of a name inserts it), and release.sql; like
     * ours, they notify only when a client watches the name (none here).
     */
    static final class Raw extends Contender {
        private static final long TTL_US = Duration.ofSeconds(30).toNanos() / 1000;
        private static final String CHANNEL = "reactive_locks_bench_raw";
        private final ConnectionPool pool;
        private final String acquireRow;
        private final String acquire;
        private final String release;

        Raw(ConnectionPool pool) {
            super("postgres", "raw", "raw R2DBC statements (floor)", Role.FLOOR);
            this.pool = pool;
            this.acquireRow = io.reactivelocks.benchmarks.PostgresScripts.render("acquire_row.sql");
            this.acquire = io.reactivelocks.benchmarks.PostgresScripts.render("acquire.sql");
            this.release = io.reactivelocks.benchmarks.PostgresScripts.render("release.sql");
        }

        @Override
        Mono<Void> cycle(String name, int worker) {
            return Mono.defer(() -> {
                String owner = GrantRequest.newOwner();
                String suffix = owner.length() + " " + owner + name;
                Mono<List<Long>> granted = ask(acquireRow, name, owner, suffix)
                        .flatMap(t -> t.isEmpty() ? ask(acquire, name, owner, suffix) : Mono.just(t));
                return granted.flatMap(tokens -> {
                    if (tokens.isEmpty() || tokens.get(0) < 0) {
                        return Mono.error(new IllegalStateException("busy"));
                    }
                    return Flux.usingWhen(pool.create(),
                                    c -> Flux.from(c.createStatement(release).bind(0, name).bind(1, owner).bind(2, CHANNEL)
                                                    .bind(3, suffix).execute())
                                            .concatMap(r -> r.map((row, md) -> row.get("token", Long.class))),
                                    Connection::close)
                            .count()
                            .filter(n -> n == 1)
                            .switchIfEmpty(Mono.error(() -> new IllegalStateException("not released")));
                }).then();
            });
        }

        private Mono<List<Long>> ask(String sql, String name, String owner, String suffix) {
            return Flux.usingWhen(pool.create(),
                    c -> Flux.from(c.createStatement(sql).bind(0, name).bind(1, owner).bind(2, TTL_US)
                                    .bind(3, CHANNEL).bind(4, suffix)
                                    .bindNull(5, String.class).execute())
                            .concatMap(r -> r.map((row, md) -> Boolean.TRUE.equals(row.get("granted", Boolean.class))
                                    ? row.get("token", Long.class) : -1L)),
                    Connection::close).collectList();
        }

        @Override
        public void close() {
            pool.close().block(Duration.ofSeconds(10));
        }
    }

    /** reactive-locks on PostgreSQL, defaults, on a pool it is given (closed with it). */
    static Contender ours(ConnectionPool pool, ConnectionFactory listener) {
        PostgresLockBackend backend = PostgresLocks.backend(pool,
                PostgresLockOptions.builder().listenerConnectionFactory(listener).build());
        return new Ours("postgres", LockClient.create(backend, LockOptions.defaults()),
                () -> pool.close().block(Duration.ofSeconds(10)));
    }

    /**
     * ShedLock's R2DBC provider: {@code lock(...)} is a one-shot tryLock that blocks its thread
     * (it is a scheduled-task lock: no waiting, no renewal, client-clock expiry), so it takes
     * part in B1 only, driven by as many threads as the concurrency. It picks its SQL dialect from
     * the driver's metadata name (PostgreSQL, MariaDB, MySQL, ...), so one class serves both stores.
     */
    static final class ShedLock extends Contender {
        private final ConnectionPool pool;
        private final R2dbcLockProvider provider;

        /**
         * @param backend the backend key
         * @param pool    the pool its {@code shedlock} table is reached through (closed with this contender)
         */
        ShedLock(String backend, ConnectionPool pool) {
            super(backend, "shedlock", "ShedLock R2DBC", Role.COMPETITOR);
            this.pool = pool;
            this.provider = new R2dbcLockProvider(pool);
        }

        @Override
        boolean blocking() {
            return true;
        }

        @Override
        void cycleBlocking(String name, int worker) {
            SimpleLock lock = provider.lock(new LockConfiguration(ClockProvider.now(), name, Duration.ofSeconds(30), Duration.ZERO))
                    .orElseThrow(() -> new IllegalStateException("busy"));
            lock.unlock();
        }

        @Override
        public void close() {
            pool.close().block(Duration.ofSeconds(10));
        }
    }
}
