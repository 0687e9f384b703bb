package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.window.WindowClaim;
import io.reactivelocks.window.WindowLock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The auto-configured client on an R2DBC {@code ConnectionFactory} bean, against a real PostgreSQL. */
class PostgresAutoConfigurationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private static PostgresServer server;

    @BeforeAll
    static void start() {
        server = PostgresServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static PostgresqlConnectionFactory factory() {
        return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host(server.host()).port(server.port())
                .username(server.username()).password(server.password()).database(server.database())
                .connectTimeout(Duration.ofSeconds(3))
                .build());
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withBean(ConnectionFactory.class, PostgresAutoConfigurationTest::factory)
                .withPropertyValues("reactive-locks.postgres.table=boot_locks", "reactive-locks.lease-time=10s");
    }

    @Test
    void theClientLocksInPostgresUsingTheConfiguredTable() {
        runner().run(context -> {
            LockClient locks = context.getBean(LockClient.class);
            StepVerifier.create(locks.withLock("order:42", lease -> Mono.just(lease.token())))
                    .assertNext(token -> assertThat(token).isPositive())
                    .expectComplete()
                    .verify(TIMEOUT);
            StepVerifier.create(locks.acquire("held")
                            .flatMap(lease -> locks.tryAcquire("held").hasElement()
                                    .flatMap(got -> lease.release().thenReturn(got))))
                    .expectNext(false)
                    .expectComplete()
                    .verify(TIMEOUT);
            assertThat(tableExists("boot_locks")).isTrue();
        });
    }

    @Test
    void aSemaphoreBeanGrantsAtMostNPermitsAndReleasesThemWithTheContext() {
        String name = "pool-" + java.util.UUID.randomUUID();
        AtomicReference<io.reactivelocks.Lease> kept = new AtomicReference<>();
        runner().run(context -> {
            assertThat(context).hasSingleBean(io.reactivelocks.semaphore.Semaphore.class);
            io.reactivelocks.semaphore.Semaphore pool = context.getBean(io.reactivelocks.semaphore.Semaphore.class);
            kept.set(pool.tryAcquire(name, 1).block(TIMEOUT));
            assertThat(kept.get()).isNotNull();
            assertThat(pool.tryAcquire(name, 1).blockOptional(TIMEOUT)).as("N = 1").isEmpty();
        });
        runner().run(context -> assertThat(context.getBean(io.reactivelocks.semaphore.Semaphore.class)
                .tryAcquire(name, 1).flatMap(l -> l.release().thenReturn(l.token())).block(TIMEOUT))
                .as("released when the first context closed").isGreaterThan(kept.get().token()));
    }

    @Test
    void aReadWriteLockBeanSharesReadsExcludesWritesAndReleasesWithTheContext() {
        String name = "catalog-" + java.util.UUID.randomUUID();
        AtomicReference<io.reactivelocks.Lease> kept = new AtomicReference<>();
        runner().run(context -> {
            assertThat(context).hasSingleBean(io.reactivelocks.rwlock.ReadWriteLock.class);
            io.reactivelocks.rwlock.ReadWriteLock rw = context.getBean(io.reactivelocks.rwlock.ReadWriteLock.class);
            kept.set(rw.read().tryAcquire(name).block(TIMEOUT));
            assertThat(kept.get()).isNotNull();
            assertThat(rw.read().tryAcquire(name).flatMap(l -> l.release().thenReturn(true)).block(TIMEOUT)).as("readers share").isTrue();
            assertThat(rw.write().tryAcquire(name).blockOptional(TIMEOUT)).as("a writer waits for the reader").isEmpty();
        });
        runner().run(context -> assertThat(context.getBean(io.reactivelocks.rwlock.ReadWriteLock.class)
                .write().tryAcquire(name).flatMap(l -> l.release().thenReturn(l.token())).block(TIMEOUT))
                .as("the reader released when the first context closed").isGreaterThan(kept.get().token()));
    }

    @Test
    void aFairLockBeanBesideTheClientHandsTheLockToItsWaiterAndReleasesWithTheContext() {
        String name = "fair-" + java.util.UUID.randomUUID();
        AtomicReference<io.reactivelocks.Lease> kept = new AtomicReference<>();
        runner().run(context -> kept.set(StoreBeanChecks.fairLockBeanWorks(context, name)));
        runner().run(context -> StoreBeanChecks.fairLockIsFree(context, name, kept.get().token()));
    }

    @Test
    void aWindowLockBeanClaimsInTheConfiguredSchemaOncePerWindow() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(WindowLock.class);
            WindowLock windows = context.getBean(WindowLock.class);
            String job = "job-" + java.util.UUID.randomUUID();
            WindowClaim claim = windows.tryClaim(job, Duration.ofHours(1)).block(TIMEOUT);
            assertThat(claim).isNotNull();
            assertThat(claim.token()).isPositive();
            assertThat(windows.tryClaim(job, Duration.ofHours(1)).blockOptional(TIMEOUT)).isEmpty();
        });
    }

    @Test
    void aPostgresTaskQueueBeanCapturesInTheConfiguredSchemaCreatingItsTableOnFirstUse() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(TaskQueue.class);
            PostgresTaskQueue tasks = context.getBean(PostgresTaskQueue.class);
            String queue = "boot-" + java.util.UUID.randomUUID();
            assertThat(tasks.register(queue, "t", 0).block(TIMEOUT)).isTrue();
            TaskClaim claim = tasks.capture(queue).blockFirst(TIMEOUT);
            assertThat(claim.token()).isPositive();
            assertThat(tasks.complete(claim).block(TIMEOUT)).isTrue();
            assertThat(tasks.status(queue, "t").block(TIMEOUT).state()).isEqualTo(TaskState.DONE);
            assertThat(tableExists("reactive_lock_tasks")).isTrue();
            assertThat(tasks.remove(queue, "t").block(TIMEOUT)).isTrue();
        });
    }

    @Test
    void closingTheContextReleasesTheClientsLeases() {
        AtomicReference<Lease> held = new AtomicReference<>();
        runner().run(context -> held.set(context.getBean(LockClient.class).acquire("kept").block(TIMEOUT)));
        assertThat(held.get()).isNotNull();

        runner().run(context -> StepVerifier.create(context.getBean(LockClient.class).tryAcquire("kept")
                        .flatMap(l -> l.release().thenReturn(true)))
                .expectNext(true)
                .expectComplete()
                .verify(TIMEOUT));
    }

    @Test
    void validateModeStartsOnASchemaMadeFromTheDdlFileAndLocks() throws java.io.IOException {
        String ddl = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "ddl", "postgresql.sql"));
        Flux.usingWhen(factory().create(), c -> Flux.from(c.createStatement(ddl).execute()).concatMap(r -> r.getRowsUpdated()),
                Connection::close).blockLast(TIMEOUT);
        runner().withPropertyValues("reactive-locks.postgres.table=reactive_locks", "reactive-locks.postgres.schema-mode=validate")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(PostgresSchemaStartupCheck.class);
                    StepVerifier.create(context.getBean(LockClient.class).withLock("validated", lease -> Mono.just(lease.token())))
                            .assertNext(token -> assertThat(token).isPositive())
                            .expectComplete()
                            .verify(TIMEOUT);
                });
    }

    @Test
    void createModeHasNoStartupCheck() {
        runner().run(context -> assertThat(context).doesNotHaveBean(PostgresSchemaStartupCheck.class));
    }

    private static boolean tableExists(String table) {
        Long n = Flux.usingWhen(factory().create(),
                        c -> Flux.from(c.createStatement("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = $1")
                                .bind(0, table).execute()).concatMap(r -> r.map((row, md) -> row.get("n", Long.class))),
                        Connection::close)
                .blockLast(TIMEOUT);
        return n != null && n == 1;
    }
}
