package io.reactivelocks.spi;

import io.reactivelocks.LockClock;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@link LockBackend} that forwards every call to another: extend it and override only what
 * changes — a view whose {@link #close()} leaves the connections open, a test double that injects
 * faults or counts calls, an observer of the requests. The store behind keeps deciding everything
 * the subclass does not override.
 */
public abstract class DelegatingLockBackend implements LockBackend {

    private final LockBackend delegate;

    /**
     * @param delegate the backend every call goes to
     * @throws NullPointerException naming {@code delegate} when it is null
     */
    protected DelegatingLockBackend(LockBackend delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** @return the backend every call goes to */
    public final LockBackend delegate() {
        return delegate;
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
    public Mono<Boolean> updatePayload(HeldLock lock, @Nullable String payload) {
        return delegate.updatePayload(lock, payload);
    }

    @Override
    public Mono<Holder> inspect(String name) {
        return delegate.inspect(name);
    }

    @Override
    public Mono<Integer> waiting(String name) {
        return delegate.waiting(name);
    }

    @Override
    public Mono<Void> revoke(String name, String owner, String reason) {
        return delegate.revoke(name, owner, reason);
    }

    @Override
    public Flux<LockEvent> events(String name) {
        return delegate.events(name);
    }

    @Override
    public Flux<LockEvent> wakeUps(String name) {
        return delegate.wakeUps(name);
    }

    @Override
    public boolean wakeUpsOmitGrants() {
        return delegate.wakeUpsOmitGrants();
    }

    @Override
    public RenewalMode renewalMode() {
        return delegate.renewalMode();
    }

    @Override
    public Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return delegate.sessionRenewals(lease, clock);
    }

    @Override
    public Mono<Void> close() {
        return delegate.close();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + delegate + "}";
    }
}
