package io.reactivelocks.internal.semaphore;

import io.reactivelocks.Lease;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.GrantEngine;
import io.reactivelocks.internal.LeaseHandle;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.semaphore.SemaphoreState;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The engine behind {@link Semaphore}: checks arguments and asks the store for N-bounded grants;
 * waiting, renewal, loss, cancel clean-up and observation are the shared
 * {@link GrantEngine}'s. Not API; create with {@link Semaphore#create}.
 */
public final class DefaultSemaphore implements Semaphore {

    private final SemaphoreStore store;
    private final GrantEngine engine;

    /**
     * @param store    the store that decides grants
     * @param defaults options for the methods that take none
     */
    public DefaultSemaphore(SemaphoreStore store, LockOptions defaults) {
        this.store = Objects.requireNonNull(store, "store");
        this.engine = new GrantEngine(store, "semaphore", Objects.requireNonNull(defaults, "options"));
    }

    @Override
    public LockOptions options() {
        return engine.options();
    }

    private void check(String name, int permits, int count) {
        LockNames.check(name);
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException("permits must be in [1, " + MAX_PERMITS + "], was " + permits);
        }
        if (count < 1 || count > permits) {
            throw new IllegalArgumentException("count must be in [1, permits = " + permits + "], was " + count);
        }
        if (count > store.maxCount()) {
            throw new IllegalArgumentException("count must be at most " + store.maxCount() + " on " + store.name()
                    + " (permits asked for at once), was " + count);
        }
    }

    @Override
    public Mono<List<Lease>> acquire(String name, int permits, int count, LockOptions options) {
        check(name, permits, count);
        Objects.requireNonNull(options, "options");
        return handles(name, permits, count, options, true).map(GrantEngine::snapshots);
    }

    @Override
    public Mono<List<Lease>> tryAcquire(String name, int permits, int count, LockOptions options) {
        check(name, permits, count);
        Objects.requireNonNull(options, "options");
        return handles(name, permits, count, options, false).map(GrantEngine::snapshots);
    }

    @Override
    public <T> Mono<T> withPermit(String name, int permits, LockOptions options, Function<? super Lease, ? extends Mono<T>> body) {
        check(name, permits, 1);
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(body, "body");
        return engine.withGrant(handles(name, permits, 1, options, true).map(l -> l.get(0)), body);
    }

    @Override
    public Flux<Lease> hold(String name, int permits, LockOptions options) {
        check(name, permits, 1);
        Objects.requireNonNull(options, "options");
        return engine.hold(name, options, o -> handles(name, permits, 1, o, true).map(l -> l.get(0)));
    }

    private Mono<List<LeaseHandle>> handles(String name, int permits, int count, LockOptions options, boolean wait) {
        // a store that queues keeps a refused waiter's place: the end of the acquire releases it
        return engine.acquire(name, count, (owners, leaseTime) -> store.tryGrant(name, owners, permits, wait, leaseTime),
                options, wait, wait && store.queues(), false);
    }

    @Override
    public Flux<SemaphoreState> observe(String name) {
        LockNames.check(name);
        return engine.observe(name, readState(name), DefaultSemaphore::earliest,
                s -> s.holders().stream().map(h -> h.owner() + "#" + h.token()).toList());
    }

    @Override
    public Mono<SemaphoreState> inspect(String name) {
        LockNames.check(name);
        return engine.within(readState(name), engine.options()).onErrorMap(e -> engine.mapError(name, "inspect", e));
    }

    @Override
    public io.reactivelocks.LockClientMetrics metrics() {
        return engine.metrics();
    }

    private static long earliest(SemaphoreState s) {
        long min = Long.MAX_VALUE;
        for (SemaphoreState.PermitHolder h : s.holders()) {
            min = Math.min(min, h.validUntilNanos());
        }
        return min;
    }

    private Mono<SemaphoreState> readState(String name) {
        return Mono.defer(() -> {
            long at = engine.options().clock().nanoTime();
            return store.holders(name).map(hs -> {
                List<SemaphoreState.PermitHolder> out = new ArrayList<>(hs.size());
                for (Holder h : hs) {
                    out.add(new SemaphoreState.PermitHolder(h.owner(), h.token(), at + h.remaining().toNanos()));
                }
                return new SemaphoreState(name, out);
            });
        });
    }

    @Override
    public Mono<Void> close() {
        return engine.close();
    }

    @Override
    public String toString() {
        return "Semaphore{" + store.name() + "}";
    }
}
