package io.reactivelocks.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.server.MariaDbServer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configured store on an R2DBC {@code ConnectionFactory} bean of the r2dbc-mariadb driver, against a real
 * MariaDB: {@code reactive-locks.backend} {@code auto} and {@code mariadb} pick the MariaDB store from the driver,
 * every concept bean works on it and is released when the context closes, and {@code postgres} refuses the factory
 * naming the property.
 */
class MariaDbAutoConfigurationTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    private static MariaDbServer server;

    @BeforeAll
    static void start() {
        server = MariaDbServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static ConnectionFactory factory() {
        return MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder()
                .host(server.host()).port(server.port())
                .username(server.username()).password(server.password()).database(server.database())
                .connectTimeout(Duration.ofSeconds(3))
                .build());
    }

    private ApplicationContextRunner runner(String backend) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ReactiveLocksAutoConfiguration.class))
                .withBean(ConnectionFactory.class, MariaDbAutoConfigurationTest::factory)
                .withPropertyValues("reactive-locks.backend=" + backend, "reactive-locks.mariadb.table=boot_locks",
                        "reactive-locks.lease-time=10s");
    }

    @Test
    void theDriverPicksTheMariaDbStoreAndEveryConceptBeanWorksAndIsReleasedWithTheContext() {
        for (String backend : new String[] {"auto", "mariadb"}) {
            String run = UUID.randomUUID().toString().substring(0, 8);
            AtomicReference<Lease> kept = new AtomicReference<>();
            runner(backend).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(LockStore.class).name()).isEqualTo("mariadb");
                kept.set(StoreBeanChecks.fairLockBeanWorks(context, "fair-" + run));
                LockClient locks = context.getBeanProvider(LockClient.class).getIfUnique();
                Lease held = locks.acquire("held-" + run).block(TIMEOUT);
                assertThat(locks.tryAcquire("held-" + run).blockOptional(TIMEOUT)).isEmpty();
                assertThat(held.token()).isPositive();
                assertThat(context.getBean(io.reactivelocks.semaphore.Semaphore.class).tryAcquire("pool-" + run, 1).block(TIMEOUT))
                        .isNotNull();
                assertThat(context.getBean(io.reactivelocks.rwlock.ReadWriteLock.class).read().tryAcquire("rw-" + run).block(TIMEOUT))
                        .isNotNull();
                assertThat(context.getBean(io.reactivelocks.window.WindowLock.class).tryClaim("job-" + run, Duration.ofHours(1))
                        .block(TIMEOUT)).isNotNull();
                assertThat(context).hasSingleBean(TaskQueue.class);
            });
            runner(backend).run(context -> StoreBeanChecks.fairLockIsFree(context, "fair-" + run, kept.get().token()));
        }
    }

    @Test
    void postgresRefusesAMariaDbFactoryNamingTheProperty() {
        runner("postgres").run(context -> assertThat(context).hasFailed().getFailure()
                .rootCause().hasMessageContaining("reactive-locks needs PostgreSQL").hasMessageContaining("reactive-locks.backend"));
    }
}
