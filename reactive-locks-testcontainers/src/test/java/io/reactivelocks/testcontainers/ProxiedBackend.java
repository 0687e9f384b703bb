package io.reactivelocks.testcontainers;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A session-renewing backend (etcd, ZooKeeper) whose own store client reaches the container through
 * a {@link FaultProxy}, so a test can partition it for real; it counts the ends of its session
 * renewal streams (completed, failed or cancelled: the client side gave up the session) and closes its store client after itself.
 */
final class ProxiedBackend extends DelegatingLockBackend {

    private final FaultProxy proxy;
    private final Runnable closeStoreClient;
    private final AtomicLong sessionEnds = new AtomicLong();

    ProxiedBackend(LockBackend delegate, FaultProxy proxy, Runnable closeStoreClient) {
        super(delegate);
        this.proxy = proxy;
        this.closeStoreClient = closeStoreClient;
    }

    FaultProxy proxy() {
        return proxy;
    }

    /**
     * Blackholes this backend's proxy until its client side has seen a session end, then cuts the
     * proxied connections (what was held is gone, as after a long partition) and heals, on a helper
     * thread, so the rest of the test can use the backend again.
     */
    void partitionUntilSessionLost() {
        long before = sessionEnds.get();
        proxy.blackhole();
        Thread healer = new Thread(() -> {
            try {
                Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                        .until(() -> sessionEnds.get() != before);
            } catch (ConditionTimeoutException e) {
                // heal anyway: the test's own assertions report what did not happen
            }
            proxy.cutConnections();
            proxy.heal();
        }, "testcontainers-contract-healer");
        healer.setDaemon(true);
        healer.start();
    }

    @Override
    public Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return delegate().sessionRenewals(lease, clock).doFinally(s -> sessionEnds.incrementAndGet());
    }

    @Override
    public Mono<Void> close() {
        return delegate().close().doFinally(s -> closeStoreClient.run());
    }
}
