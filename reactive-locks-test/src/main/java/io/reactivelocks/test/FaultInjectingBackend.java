package io.reactivelocks.test;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.DelegatingLockBackend;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Wraps a real backend and lets a test break parts of it from the client's side: renewals that
 * fail as if the connection were cut, or a store that does not answer at all. The store itself
 * keeps deciding everything else (grants, expiry, tokens). It also counts calls.
 */
public final class FaultInjectingBackend extends DelegatingLockBackend {

    private volatile boolean failRenewals;
    private volatile boolean silent;
    private final AtomicLong grants = new AtomicLong();
    private final AtomicLong failedGrants = new AtomicLong();
    private final AtomicLong renewCalls = new AtomicLong();
    private final AtomicLong renewedLeases = new AtomicLong();
    private final AtomicLong releases = new AtomicLong();

    private FaultInjectingBackend(LockBackend delegate) {
        super(delegate);
    }

    /**
     * @param backend the real backend
     * @return a wrapper that behaves like {@code backend} until a fault is switched on
     */
    public static FaultInjectingBackend wrap(LockBackend backend) {
        return new FaultInjectingBackend(backend);
    }

    /**
     * @param fail {@code true}: every renewal fails with a transient error, as if this client's
     *             connection were cut; grants and releases still work
     * @return this
     */
    public FaultInjectingBackend failRenewals(boolean fail) {
        this.failRenewals = fail;
        return this;
    }

    /**
     * @param silent {@code true}: no call answers at all (a blackholed server); the client's
     *               request timeout must turn that into an error
     * @return this
     */
    public FaultInjectingBackend silent(boolean silent) {
        this.silent = silent;
        return this;
    }

    /** @return how many {@code tryGrant} calls were made */
    public long grantCalls() {
        return grants.get();
    }

    /**
     * @return how many {@code tryGrant} calls failed, counting a queued place whose turn failed (a lost
     *         connection, a request timeout): each is asked again
     */
    public long failedGrants() {
        return failedGrants.get();
    }

    /** @return how many {@code renew} calls (batches) were made */
    public long renewCalls() {
        return renewCalls.get();
    }

    /** @return how many leases were sent for renewal in all batches */
    public long renewedLeases() {
        return renewedLeases.get();
    }

    /** @return how many {@code release} calls were made */
    public long releaseCalls() {
        return releases.get();
    }

    @Override
    public Mono<Attempt> tryGrant(GrantRequest request) {
        return Mono.defer(() -> {
            grants.incrementAndGet();
            return silent ? Mono.never() : delegate().tryGrant(request);
        }).map(a -> a instanceof Attempt.Queued q
                ? new Attempt.Queued(q.turn().doOnError(e -> failedGrants.incrementAndGet()))
                : a).doOnError(e -> failedGrants.incrementAndGet());
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Mono.defer(() -> {
            renewCalls.incrementAndGet();
            renewedLeases.addAndGet(batch.size());
            if (silent) {
                return Mono.never();
            }
            if (failRenewals) {
                return Mono.error(new LockBackendException(null, "renewal cut by the test", null, true));
            }
            return delegate().renew(batch);
        });
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return Mono.defer(() -> {
            releases.incrementAndGet();
            return silent ? Mono.never() : delegate().release(name, owner);
        });
    }

    @Override
    public Mono<Boolean> updatePayload(HeldLock lock, String payload) {
        return Mono.defer(() -> silent ? Mono.never() : delegate().updatePayload(lock, payload));
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return Mono.defer(() -> silent ? Mono.never() : delegate().inspect(name));
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return Flux.defer(() -> silent ? Flux.never() : delegate().events(name));
    }
}
