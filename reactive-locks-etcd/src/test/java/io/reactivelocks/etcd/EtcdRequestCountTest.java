package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * Requests per operation as etcd counts them (its {@code /metrics}, like benchmarks B1 and B3), on a
 * server of this class alone: an uncontended acquire + release is the transaction and the delete
 * (the session's latest keep-alive confirms the grant, one prefix watch opened once serves every
 * held key), and a handoff is the delete and the next waiter's one read. A session keep-alive that
 * falls inside the counted window (one per TTL/3) is the only allowed extra.
 */
class EtcdRequestCountTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    /** Long enough that at most one session keep-alive cycle falls in a counted window. */
    private static final Duration SESSION = Duration.ofSeconds(10);
    private static final int PAIRS = 40;
    private static final int WAITERS = 6;

    private static EtcdTestSupport etcd;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    private static LockClient client() {
        EtcdLockOptions options = EtcdLockOptions.builder().prefix(etcd.prefix).sessionTtl(SESSION)
                .requestTimeout(Duration.ofSeconds(5)).build();
        return LockClient.create(etcd.backend(options), LockOptions.builder()
                .leaseTime(SESSION).requestTimeout(Duration.ofSeconds(5)).build());
    }

    @Test
    void anUncontendedAcquireAndReleaseIsTwoRequests() {
        LockClient locks = client();
        try {
            String name = "pair-" + UUID.randomUUID();
            locks.acquire(name).block(STEP).release().block(STEP); // session lease, prefix watch
            long before = etcd.requestsReceived();
            long lastToken = 0;
            for (int i = 0; i < PAIRS; i++) {
                Lease l = locks.acquire(name).block(STEP);
                assertThat(l.token()).isGreaterThan(lastToken);
                lastToken = l.token();
                l.release().block(STEP);
            }
            long requests = etcd.requestsReceived() - before;
            // was 4 per pair: txn, keep-alive, watch create, delete
            assertThat(requests).as("requests for %d pairs", PAIRS).isBetween(2L * PAIRS, 2L * PAIRS + 2);
        } finally {
            locks.close().block(STEP);
        }
        assertThat(etcd.keys()).isEmpty();
    }

    @Test
    void aHandoffWithinOneClientIsOneRequest() throws Exception {
        LockClient locks = client();
        String name = "handoff-" + UUID.randomUUID();
        List<Disposable> waits = new ArrayList<>();
        try {
            locks.acquire("warm-" + UUID.randomUUID()).block(STEP).release().block(STEP); // session lease, prefix watch
            Lease holder = locks.acquire(name).block(STEP);
            CountDownLatch granted = new CountDownLatch(WAITERS);
            List<Long> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < WAITERS; i++) {
                waits.add(locks.acquire(name)
                        .flatMap(l -> {
                            tokens.add(l.token());
                            return l.release();
                        })
                        .subscribe(null, e -> { }, granted::countDown));
                // queue one at a time, so that each waits on the one before it (no waiter gives up)
                int queued = i + 2;
                await().atMost(STEP).pollInterval(Duration.ofMillis(20)).until(() -> etcd.keys().size() == queued);
            }
            long before = etcd.requestsReceived();
            holder.release().block(STEP);
            assertThat(granted.await(30, TimeUnit.SECONDS)).isTrue();
            long requests = etcd.requestsReceived() - before;
            // was 4 per handoff (delete, the next waiter's read, keep-alive, watch create), then 2 (delete, read):
            // now the delete only — each waiter's predecessor was the holder when it queued or was granted by this
            // client, so its deletion alone makes the waiter first (plus at most a keep-alive cycle)
            assertThat(requests).as("requests for %d handoffs", WAITERS).isBetween((long) WAITERS, WAITERS + 2L);
            assertThat(tokens).hasSize(WAITERS).isSorted().doesNotHaveDuplicates();
            assertThat(tokens.get(0)).isGreaterThan(holder.token());
        } finally {
            waits.forEach(Disposable::dispose);
            locks.close().block(STEP);
        }
        await().atMost(STEP).pollInterval(Duration.ofMillis(20)).until(() -> etcd.keys().isEmpty());
    }
}
