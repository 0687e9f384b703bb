package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.LockOptions;
import io.reactivelocks.fencing.StaleTokenException;
import io.reactivelocks.r2dbc.FencedWrites;
import io.reactivelocks.r2dbc.MissingRowException;
import io.reactivelocks.r2dbc.SpringFencedWrites;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockStore;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/stores/postgresql.md and docs/concepts/fencing.md, run against a real PostgreSQL. */
class DocsPostgresTest {

    static final Duration STEP = Duration.ofSeconds(20);

    private static PostgresServer server;
    private static String r2dbcUrl;

    @BeforeAll
    static void start() {
        server = PostgresServer.start();
        r2dbcUrl = server.r2dbcUrl();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void quickStart() {
        // tag::quick-start[]
        ConnectionFactory db = ConnectionFactories.get(r2dbcUrl);   // e.g. "r2dbc:postgresql://app:secret@localhost:5432/app"
        LockStore store = PostgresLocks.connect(db);               // one pool + one LISTEN connection; tables on first use
        LockClient locks = store.locks();                          // ... and every other concept: store.semaphores(...), ...

        Mono<String> receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        // end::quick-start[]
        StepVerifier.create(receipt).expectNextMatches(r -> r.startsWith("charged order:42 with fence ")).expectComplete().verify(STEP);
        store.close().block(STEP);
    }

    @Test
    void ownPoolAndMigration() {
        ConnectionFactory db = ConnectionFactories.get(r2dbcUrl);
        // tag::own-pool[]
        ConnectionPool pool = new ConnectionPool(ConnectionPoolConfiguration.builder(db).maxSize(10).build());
        PostgresLockBackend backend = PostgresLocks.backend(pool, PostgresLockOptions.builder()
                .schema("locks").createSchemaOnFirstUse(false).build());
        Mono<Void> migrated = backend.migrate();                   // idempotent, safe from many processes at once
        LockStore store = PostgresLocks.connect(backend);          // the session closes the backend; the pool stays yours
        LockClient locks = store.locks(LockOptions.defaults());
        // end::own-pool[]
        StepVerifier.create(migrated.then(locks.withLock("order:42", lease -> Mono.just(lease.token()))))
                .expectNextMatches(token -> token > 0)
                .expectComplete()
                .verify(STEP);
        assertThat(sql(pool, "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'locks' AND table_name = 'reactive_locks'"))
                .isEqualTo(1L);
        store.close().block(STEP);
        pool.dispose();
    }

    @Test
    void fencedWritesOnYourRows() {
        ConnectionFactory db = ConnectionFactories.get(r2dbcUrl);
        sql(db, "CREATE TABLE IF NOT EXISTS accounts (id int PRIMARY KEY, balance int NOT NULL, fence bigint)");
        sql(db, "INSERT INTO accounts VALUES (42, 0, NULL) ON CONFLICT DO NOTHING");
        LockStore store = PostgresLocks.connect(db);
        LockClient locks = store.locks();
        Lease paused = locks.acquire("account:42").block(STEP);      // then paused past its lease: taken away
        store.admin().forceRelease("account:42").block(STEP);
        // tag::fenced-writes[]
        FencedWrites accounts = FencedWrites.of(db, "accounts", "id");   // your table, with a bigint "fence" column
        Mono<Void> written = locks.withLock("account:42", lease ->
                accounts.write(42, "balance", 100, lease.token()));  // StaleTokenException: a newer token has written
        // UPDATE "accounts" SET "balance" = $1, "fence" = $2 WHERE "id" = $3 AND ("fence" IS NULL OR "fence" <= $2)
        // end::fenced-writes[]
        StepVerifier.create(written).expectComplete().verify(STEP);
        long fence = sql(db, "SELECT fence AS n FROM accounts WHERE id = 42");
        // tag::fenced-writes-stale[]
        Mono<Void> late = accounts.write(42, "balance", -1, paused.token())
                .onErrorResume(StaleTokenException.class, e ->         // e.token() refused, e.fence() the row's
                        Mono.fromRunnable(() -> undo(e.token(), e.fence().getAsLong())));
        Mono<Void> none = accounts.write(7, "balance", 1, paused.token());   // MissingRowException: no row 7
        // end::fenced-writes-stale[]
        StepVerifier.create(late).expectComplete().verify(STEP);
        assertThat(undone).containsExactly(paused.token(), fence);
        StepVerifier.create(none).expectError(MissingRowException.class).verify(STEP);
        assertThat(sql(db, "SELECT balance::bigint AS n FROM accounts WHERE id = 42")).isEqualTo(100L);
        store.close().block(STEP);
    }

    @Test
    void fencedWritesInASpringTransaction() {
        ConnectionFactory db = ConnectionFactories.get(r2dbcUrl);
        sql(db, "CREATE TABLE IF NOT EXISTS stock (sku text PRIMARY KEY, available int NOT NULL, fence bigint)");
        sql(db, "CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, sku text NOT NULL)");
        sql(db, "INSERT INTO stock VALUES ('sku-1', 10, NULL) ON CONFLICT DO NOTHING");
        DatabaseClient databaseClient = DatabaseClient.create(db);
        TransactionalOperator transactionalOperator = TransactionalOperator.create(new R2dbcTransactionManager(db));
        LockStore store = PostgresLocks.connect(db);
        LockClient locks = store.locks();
        // tag::fenced-writes-spring[]
        FencedWrites stock = SpringFencedWrites.of(databaseClient, "stock", "sku");   // joins the caller's transaction
        Mono<Void> order = locks.withLock("sku:sku-1", lease ->
                databaseClient.sql("INSERT INTO orders VALUES (:id, :sku)").bind("id", "o-1").bind("sku", "sku-1").then()
                        .then(stock.write("sku-1", "available", 9, lease.token()))   // refused: both roll back
                        .as(transactionalOperator::transactional));
        // end::fenced-writes-spring[]
        StepVerifier.create(order).expectComplete().verify(STEP);
        assertThat(sql(db, "SELECT available::bigint AS n FROM stock WHERE sku = 'sku-1'")).isEqualTo(9L);
        assertThat(sql(db, "SELECT count(*) AS n FROM orders")).isEqualTo(1L);
        store.close().block(STEP);
    }

    private final List<Long> undone = new ArrayList<>();

    private void undo(long token, long fence) {
        undone.add(token);
        undone.add(fence);
    }

    @Test
    void taskQueue() {
        ConnectionFactory db = ConnectionFactories.get(r2dbcUrl);
        // tag::task-queue[]
        PostgresLockStore store = PostgresLocks.connect(db);      // its task queues are PostgresTaskQueues
        PostgresTaskQueue tasks = store.taskQueue(
                LockOptions.builder().leaseTime(Duration.ofMinutes(1)).build());   // the claim time
        Mono<Void> ready = tasks.migrate();                        // or let the first use create the table
        // end::task-queue[]
        StepVerifier.create(ready.then(tasks.register("emails", "welcome:42", 3))
                        .thenMany(tasks.tryCapture("emails", 1))
                        .concatMap(tasks::complete))
                .expectNext(true)
                .expectComplete()
                .verify(STEP);
        tasks.remove("emails", "welcome:42").block(STEP);
        store.close().block(STEP);
    }

    private static long sql(ConnectionFactory db, String statement) {
        return Flux.usingWhen(db.create(),
                        c -> Flux.from(c.createStatement(statement).execute())
                                .flatMap(r -> r.map((row, meta) -> meta.getColumnMetadatas().isEmpty()
                                        ? 0L : ((Number) row.get(0)).longValue())),
                        c -> c.close())
                .reduce(0L, (a, b) -> b)
                .defaultIfEmpty(0L)
                .block(STEP);
    }

    static Mono<String> charge(String order, long token) {
        return Mono.fromSupplier(() -> "charged " + order + " with fence " + token);
    }
}
