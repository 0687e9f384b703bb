package io.reactivelocks.test;

import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A real semaphore store passed through unchanged, counting the grant attempts the engine sends
 * and whether its change stream is live: for the stores' "no herd" tests (how many attempts per
 * handoff with several waiters). Not a mock: every call goes to the wrapped store.
 */
public final class CountingSemaphoreStore implements SemaphoreStore {

    private final SemaphoreStore store;
    private final AtomicInteger attempts = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger subscribed = new AtomicInteger();
    private final AtomicInteger waiting = new AtomicInteger();

    /** @param store the store to pass calls to */
    public CountingSemaphoreStore(SemaphoreStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /** @return the grant attempts sent so far */
    public int attempts() {
        return attempts.get();
    }

    /** @return the grant attempts sent and not answered yet */
    public int inFlight() {
        return inFlight.get();
    }

    /** @return how many {@link LockEvent.Subscribed} the change streams have emitted */
    public int subscribed() {
        return subscribed.get();
    }

    @Override
    public String name() {
        return store.name();
    }

    /** Counts the attempt on subscribe, then passes it on. */
    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
        return Mono.defer(() -> {
            attempts.incrementAndGet();
            inFlight.incrementAndGet();
            return store.tryGrant(name, owners, permits, leaseTime).doFinally(s -> inFlight.decrementAndGet());
        });
    }

    /** Counts the attempt on subscribe, then passes it on. */
    @Override
    public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
        return Mono.defer(() -> {
            attempts.incrementAndGet();
            inFlight.incrementAndGet();
            return store.tryGrant(name, owners, permits, waiting, leaseTime).doFinally(s -> inFlight.decrementAndGet());
        });
    }

    @Override
    public boolean queues() {
        return store.queues();
    }

    /** The wrapped store's wait, counting the waits that are armed (subscribed) and not over yet. */
    @Override
    public Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> {
            waiting.incrementAndGet();
            return store.awaitTurn(name, owners).doFinally(s -> waiting.decrementAndGet());
        });
    }

    /** @return the waits ({@link #awaitTurn}) subscribed and not over: callers parked in the store's queue */
    public int waiting() {
        return waiting.get();
    }

    @Override
    public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return store.renew(batch);
    }

    @Override
    public Mono<Boolean> release(String name, String owner) {
        return store.release(name, owner);
    }

    @Override
    public Mono<List<Holder>> holders(String name) {
        return store.holders(name);
    }

    /** The wrapped store's stream, counting its {@link LockEvent.Subscribed} events. */
    @Override
    public Flux<LockEvent> events(String name) {
        return counted(store.events(name));
    }

    /** The wrapped store's waiters' stream, counting its {@link LockEvent.Subscribed} events. */
    @Override
    public Flux<LockEvent> wakeUps(String name) {
        return counted(store.wakeUps(name));
    }

    private Flux<LockEvent> counted(Flux<LockEvent> events) {
        return events.doOnNext(e -> {
            if (e instanceof LockEvent.Subscribed) {
                subscribed.incrementAndGet();
            }
        });
    }

    @Override
    public Mono<Void> close() {
        return store.close();
    }
}
