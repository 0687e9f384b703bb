package io.reactivelocks.r2dbc.postgresql;

import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The order in which statements take locks: a watch or unwatch of a name takes the name's advisory
 * lock and then its lock row, so no statement may hold the lock row and then ask for that advisory
 * lock — a fair lock's release (and its grant, and a payload update) did, through the notify
 * function, and deadlocked with a client's watch of the name ({@code 40P01 deadlock detected}, seen in
 * a CI run once waiters' subscriptions lingered after their grant). Held here by a transaction of its
 * own, the advisory lock must not keep any of them waiting.
 */
class PostgresLockOrderTest {

    private static final Duration STEP = Duration.ofSeconds(5);
    /** The seed of the watchers' advisory lock of a name (watchers_schema.sql). */
    private static final long WATCH_LOCK_SEED = 7305467431562270023L;

    @Test
    void fairGrantReleaseAndPayloadUpdateDoNotWaitForTheNamesWatchLock() {
        PostgresqlConnectionFactory raw = PostgresTestSupport.factory(PostgresTestSupport.shared());
        PostgresLockOptions options = PostgresLockOptions.builder().schema("lock_order").channel("lock_order_locks")
                .listenerConnectionFactory(raw).build();
        LockStore session = PostgresLocks.connect(PostgresLockBackend.create(raw, options));
        LockClient fair = session.fairLocks(LockOptions.builder().leaseTime(Duration.ofSeconds(30)).build());
        String name = "order-" + UUID.randomUUID();
        Connection watch = Mono.from(raw.create()).block(STEP);
        try {
            // a watch of the name, stopped between its advisory lock and its lock-row write
            Mono.from(watch.beginTransaction()).block(STEP);
            Flux.from(watch.createStatement("SELECT pg_advisory_xact_lock(hashtextextended($1, $2))")
                            .bind(0, TextEscapes.encode(name)).bind(1, WATCH_LOCK_SEED).execute())
                    .flatMap(r -> r.getRowsUpdated()).blockLast(STEP);

            Lease lease = fair.acquire(name).block(STEP);
            assertThat(lease).as("granted while a watch holds the name's advisory lock").isNotNull();
            lease.updatePayload("p").block(STEP);
            lease.release().block(STEP);
            assertThat(fair.tryAcquire(name).flatMap(l -> l.release().thenReturn(true)).block(STEP)).isTrue();
        } finally {
            Mono.from(watch.rollbackTransaction()).onErrorResume(e -> Mono.empty()).block(STEP);
            Mono.from(watch.close()).block(STEP);
            session.close().block(STEP);
        }
    }
}
