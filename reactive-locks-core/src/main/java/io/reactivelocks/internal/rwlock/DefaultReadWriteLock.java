package io.reactivelocks.internal.rwlock;

import io.reactivelocks.Lease;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.GrantEngine;
import io.reactivelocks.internal.LeaseHandle;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.rwlock.ReadWriteState;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * The engine behind {@link ReadWriteLock}: checks arguments, refuses nested requests for a name the
 * Reactor context holds, and asks the store for read or write grants; waiting, renewal, loss,
 * cancel clean-up and observation are the shared {@link GrantEngine}'s. Not API; create with
 * {@link ReadWriteLock#create}.
 */
public final class DefaultReadWriteLock implements ReadWriteLock {

    /** Context key: the names (and modes) the scoped bodies of this chain hold. */
    private static final Object HELD = new Object() {
        @Override
        public String toString() {
            return "reactive-locks.rwlock.held";
        }
    };

    private final ReadWriteStore store;
    private final ReadWriteLockOptions options;
    private final GrantEngine engine;
    private final Side read = new Side(LockMode.READ);
    private final Side write = new Side(LockMode.WRITE);

    /**
     * @param store   the store that decides grants
     * @param options timing and policy
     */
    public DefaultReadWriteLock(ReadWriteStore store, ReadWriteLockOptions options) {
        this.store = Objects.requireNonNull(store, "store");
        this.options = Objects.requireNonNull(options, "options");
        this.engine = new GrantEngine(store, "read-write lock", options.lockOptions());
    }

    @Override
    public ReadWriteLockOptions options() {
        return options;
    }

    @Override
    public Access read() {
        return read;
    }

    @Override
    public Access write() {
        return write;
    }

    @Override
    public Flux<ReadWriteState> observe(String name) {
        LockNames.check(name);
        return engine.observe(name, readState(name), Observed::earliest, o -> o.state).map(Observed::state);
    }

    /** A state and the earliest moment something of it expires (intents included). */
    private record Observed(ReadWriteState state, long earliest) {
    }

    private Mono<Observed> readState(String name) {
        return Mono.defer(() -> {
            long at = engine.options().clock().nanoTime();
            return store.holders(name).map(h -> {
                long[] earliest = {Long.MAX_VALUE};
                List<ReadWriteState.Holder> readers = new ArrayList<>(h.readers().size());
                for (Holder r : h.readers()) {
                    readers.add(holder(r, at, earliest));
                }
                ReadWriteState.Holder writer = h.writer() == null ? null : holder(h.writer(), at, earliest);
                List<String> waiting = new ArrayList<>(h.waitingWriters().size());
                for (Holder w : h.waitingWriters()) {
                    holder(w, at, earliest);
                    waiting.add(w.owner());
                }
                return new Observed(new ReadWriteState(name, readers, writer, waiting), earliest[0]);
            });
        });
    }

    private static ReadWriteState.Holder holder(Holder h, long at, long[] earliest) {
        long until = h.remaining() == null ? Long.MAX_VALUE : at + h.remaining().toNanos();
        earliest[0] = Math.min(earliest[0], until);
        return new ReadWriteState.Holder(h.owner(), h.token(), until);
    }

    @Override
    public Mono<ReadWriteState> inspect(String name) {
        LockNames.check(name);
        return engine.within(readState(name), engine.options())
                .map(Observed::state)
                .onErrorMap(e -> engine.mapError(name, "inspect", e));
    }

    @Override
    public io.reactivelocks.LockClientMetrics metrics() {
        return engine.metrics();
    }

    @Override
    public Mono<Void> close() {
        return engine.close();
    }

    @Override
    public String toString() {
        return "ReadWriteLock{" + store.name() + ", " + options.preference() + "}";
    }

    private static IllegalStateException nested(String name, LockMode held, LockMode asked) {
        String why = held == LockMode.READ && asked == LockMode.WRITE
                ? "upgrading a read grant to a write grant is not supported (two upgrading readers would wait for each other forever)"
                : "the read-write lock is not reentrant (the request would wait for the grant this chain holds)";
        return new IllegalStateException("a " + asked.name().toLowerCase(Locale.ROOT) + " grant of '" + name
                + "' was requested inside a scope holding its " + held.name().toLowerCase(Locale.ROOT)
                + " grant: " + why + "; release the grant first");
    }

    @SuppressWarnings("unchecked")
    private static @Nullable LockMode heldBy(ContextView ctx, String name) {
        Map<String, LockMode> held = ctx.getOrDefault(HELD, null);
        return held == null ? null : held.get(name);
    }

    /** One side of the lock. */
    private final class Side implements Access {
        private final LockMode mode;

        Side(LockMode mode) {
            this.mode = mode;
        }

        @Override
        public LockMode mode() {
            return mode;
        }

        @Override
        public LockOptions options() {
            return options.lockOptions();
        }

        @Override
        public Mono<Lease> acquire(String name, LockOptions options) {
            LockNames.check(name);
            Objects.requireNonNull(options, "options");
            return handle(name, options, true).map(GrantEngine::snapshot);
        }

        @Override
        public Mono<Lease> tryAcquire(String name, LockOptions options) {
            LockNames.check(name);
            Objects.requireNonNull(options, "options");
            return handle(name, options, false).map(GrantEngine::snapshot);
        }

        @Override
        public <T> Mono<T> withLock(String name, LockOptions options, Function<? super Lease, ? extends Mono<T>> body) {
            LockNames.check(name);
            Objects.requireNonNull(options, "options");
            Objects.requireNonNull(body, "body");
            return engine.withGrant(handle(name, options, true),
                    lease -> Mono.<T>defer(() -> body.apply(lease)).contextWrite(ctx -> {
                        Map<String, LockMode> held = new HashMap<>(ctx.getOrDefault(HELD, Map.of()));
                        held.put(name, mode);
                        return ctx.put(HELD, Map.copyOf(held));
                    }));
        }

        @Override
        public Flux<Lease> hold(String name, LockOptions options) {
            LockNames.check(name);
            Objects.requireNonNull(options, "options");
            return engine.hold(name, options, o -> handle(name, o, true));
        }

        private Mono<LeaseHandle> handle(String name, LockOptions options, boolean wait) {
            boolean writerPreferring = DefaultReadWriteLock.this.options.preference() == ReadWriteLockOptions.Preference.WRITERS;
            // a waiting writer's intent (or a queue place) lasts one lease time from its last
            // attempt: attempt again within half of it, so it does not lapse while its owner waits
            Duration refresh = options.leaseTime().dividedBy(2);
            GrantEngine.GrantCall call = (owners, leaseTime) -> store.tryGrant(name, owners.get(0), mode, writerPreferring, wait, leaseTime)
                    .map(g -> wait && g instanceof PermitGrant.Busy busy
                            ? new PermitGrant.Busy(busy.earliestExpiry() == null || busy.earliestExpiry().compareTo(refresh) > 0 ? refresh : busy.earliestExpiry())
                            : g);
            return Mono.deferContextual(ctx -> {
                LockMode held = heldBy(ctx, name);
                if (held != null) {
                    return Mono.error(nested(name, held, mode));
                }
                // a refused waiting attempt may leave an intent or a queue place: the end of the acquire releases it
                // a writer leaving may let every waiting reader in: a release wakes every local waiter
                // while a reader waits, else one (a writer)
                return engine.acquire(name, 1, call, options, wait, wait, mode == LockMode.READ).map(l -> l.get(0));
            });
        }
    }
}
