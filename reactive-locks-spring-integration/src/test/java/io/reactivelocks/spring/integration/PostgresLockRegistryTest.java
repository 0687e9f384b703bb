package io.reactivelocks.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The same registry over PostgreSQL: nothing in the adapter depends on the store. */
class PostgresLockRegistryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void reentrantExclusiveAndFencedOnPostgres() throws Exception {
        try (PostgresServer pg = PostgresServer.start()) {
            PostgresqlConnectionFactory factory = new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                    .host(pg.host()).port(pg.port()).username(pg.username()).password(pg.password())
                    .database(pg.database()).connectTimeout(Duration.ofSeconds(3)).build());
            LockStore store = PostgresLocks.connect(factory, PostgresLockOptions.builder().schema("si_registry").build());
            LockClient client = store.locks(LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build());
            ExecutorService threads = Executors.newSingleThreadExecutor();
            try {
                client.tryAcquire("warm-up").flatMap(Lease::release).retry(2).block(Duration.ofSeconds(60));
                String key = "si-pg-" + UUID.randomUUID();
                ReactiveLocksLockRegistry registry = new ReactiveLocksLockRegistry(client);
                ReactiveLocksLockRegistry other = new ReactiveLocksLockRegistry(client);
                ReactiveLocksLock lock = registry.obtain(key);

                lock.lock();
                lock.lock();
                long first = lock.token();
                assertThat(((LockState.Held) client.inspect(key).block(TIMEOUT)).token()).isEqualTo(first);
                assertThat(other.obtain(key).tryLock(200, TimeUnit.MILLISECONDS)).isFalse();
                assertThat(threads.submit(() -> lock.tryLock()).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
                lock.unlock();
                assertThat(client.inspect(key).block(TIMEOUT)).isInstanceOf(LockState.Held.class);
                lock.unlock();
                assertThat(client.inspect(key).block(TIMEOUT)).isInstanceOf(LockState.Free.class);

                ReactiveLocksLock theirs = other.obtain(key);
                assertThat(theirs.tryLock(2, TimeUnit.SECONDS)).isTrue();
                assertThat(theirs.token()).isGreaterThan(first);
                theirs.unlock();
                assertThat(client.inspect(key).block(TIMEOUT)).isInstanceOf(LockState.Free.class);
            } finally {
                threads.shutdownNow();
                store.close().block(TIMEOUT);
            }
        }
    }
}
