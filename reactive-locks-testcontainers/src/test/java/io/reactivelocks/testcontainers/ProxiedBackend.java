package io.reactivelocks.testcontainers;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.spi.RenewalMode;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.List;
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
final class ProxiedBackend implements LockBackend {

    private final LockBackend delegate;
    private final FaultProxy proxy;
    private final Runnable closeStoreClient;
    private final AtomicLong sessionEnds = new AtomicLong();

    ProxiedBackend(LockBackend delegate, FaultProxy proxy, Runnable closeStoreClient) {
        this.delegate = delegate;
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
    public String name() {
        return delegate.name();
    }

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return delegate.tryGrant(request);
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return delegate.renew(batch);
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return delegate.release(name, owner);
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return delegate.inspect(name);
    }

    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, @org.jspecify.annotations.Nullable String payload) {
        return delegate.updatePayload(lock, payload);
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return delegate.events(name);
    }

    @Override
    public RenewalMode renewalMode() {
        return delegate.renewalMode();
    }

    @Override
    public Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return delegate.sessionRenewals(lease, clock).doFinally(s -> sessionEnds.incrementAndGet());
    }

    @Override
    public Mono<Void> close() {
        return delegate.close().doFinally(s -> closeStoreClient.run());
    }
}
