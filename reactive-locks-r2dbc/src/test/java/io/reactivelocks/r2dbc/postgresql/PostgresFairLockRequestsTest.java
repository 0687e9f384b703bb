package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Statements per fair-lock handoff, counted client-side on the pool's connections as the benchmark
 * counts them ({@code Connection.createStatement}): a queued waiter knows its rank and asks on a
 * release only once it counts itself head, so a handoff is the release and the new head's ask —
 * not one ask per waiter in line.
 */
class PostgresFairLockRequestsTest {

    private static final int WAITERS = 8;
    /** No timer fires during the test: 60 s lease (hint), 120 s waiter deadline (refresh every 60 s), 10-minute backoff. */
    private static final LockOptions SLOW = LockOptions.builder().leaseTime(Duration.ofSeconds(60))
            .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
            .build();

    /** A factory whose connections count the statements created on them. */
    private static ConnectionFactory counting(ConnectionFactory delegate, AtomicLong statements) {
        return new ConnectionFactory() {
            @Override
            public Publisher<? extends Connection> create() {
                return Mono.from(delegate.create()).map(c -> (Connection) Proxy.newProxyInstance(
                        PostgresFairLockRequestsTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                            if (m.getName().equals("createStatement")) {
                                statements.incrementAndGet();
                            }
                            try {
                                return m.invoke(c, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }));
            }

            @Override
            public ConnectionFactoryMetadata getMetadata() {
                return delegate.getMetadata();
            }
        };
    }

    @Test
    void aHandoffIsTheReleaseAndTheNewHeadsAskNotTheWholeLine() {
        PostgresqlConnectionFactory raw = PostgresTestSupport.factory(PostgresTestSupport.shared());
        AtomicLong statements = new AtomicLong();
        PostgresLockOptions options = PostgresLockOptions.builder().schema("fair_requests").channel("fair_requests_locks")
                .poolMaxSize(4).listenerConnectionFactory(raw).build();
        PostgresLockBackend backend = PostgresLockBackend.create(counting(raw, statements), options);
        LockStore session = PostgresLocks.connect(backend);
        LockClient fair = session.fairLocks(SLOW);
        String name = "handoff-" + UUID.randomUUID();
        ConcurrentLinkedQueue<Lease> granted = new ConcurrentLinkedQueue<>();
        List<Disposable> waiting = new ArrayList<>();
        try {
            Lease current = fair.acquire(name).block(TIMEOUT);
            for (int i = 0; i < WAITERS; i++) {
                waiting.add(fair.acquire(name).subscribe(granted::add));
            }
            await().atMost(TIMEOUT).until(() -> PostgresTestSupport.count(raw, "fair_requests", options.table() + "_waiters") == WAITERS);
            // the waiters' rows are in, but a loaded machine may still be finishing their first asks: count from
            // the moment no statement has been sent for a while, so that the first handoff counts only itself
            AtomicLong seen = new AtomicLong(-1);
            await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(250)).until(() -> seen.getAndSet(statements.get()) == statements.get());
            List<Long> perHandoff = new ArrayList<>();
            for (int k = 1; k <= WAITERS; k++) {
                long before = statements.get();
                current.release().block(TIMEOUT);
                int expected = k;
                await().atMost(TIMEOUT).until(() -> granted.size() == expected);
                perHandoff.add(statements.get() - before);
                current = new ArrayList<>(granted).get(k - 1);
            }
            current.release().block(TIMEOUT);
            // every waiter in line asking on every release would be 8 + 7 + ... + 1 asks plus 8 releases = 44
            long total = perHandoff.stream().mapToLong(Long::longValue).sum();
            assertThat(total).as("statements per handoff %s", perHandoff).isLessThanOrEqualTo(3L * WAITERS);
        } finally {
            waiting.forEach(Disposable::dispose);
            session.close().block(TIMEOUT); // the fair lock, then the backend
        }
    }
}
