package io.reactivelocks.internal.multi;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.multi.MultiLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The engine behind {@link MultiLock}: takes the names one by one in canonical order through the
 * public {@link LockClient} API and keeps track of what it took, so that a cancel, an error or a
 * refusal half-way releases it. Not API; create with {@link MultiLock#create}.
 */
public final class DefaultMultiLock implements MultiLock {

    private static final Logger LOG = Loggers.getLogger(DefaultMultiLock.class);

    private final LockClient client;

    /** @param client the client whose locks are taken */
    public DefaultMultiLock(LockClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    @Override
    public LockClient client() {
        return client;
    }

    @Override
    public Mono<MultiLease> acquire(Collection<String> names, LockOptions options) {
        List<String> sorted = MultiLock.canonicalOrder(names);
        Objects.requireNonNull(options, "options");
        return Mono.defer(() -> {
            Taken taken = new Taken();
            long deadline = deadline(options);
            return Flux.fromIterable(sorted)
                    .concatMap(n -> acquireOne(n, options, deadline).doOnNext(taken::add), 0)
                    .then(Mono.fromSupplier(taken::complete))
                    .onErrorResume(e -> taken.releaseAll().then(Mono.error(e)))
                    .filter(taken::handOver)
                    .doOnCancel(taken::releaseDetached);
        });
    }

    @Override
    public Mono<MultiLease> tryAcquire(Collection<String> names, LockOptions options) {
        List<String> sorted = MultiLock.canonicalOrder(names);
        Objects.requireNonNull(options, "options");
        return Mono.defer(() -> {
            Taken taken = new Taken();
            return Flux.fromIterable(sorted)
                    .concatMap(n -> client.tryAcquire(n, options).doOnNext(taken::add).hasElement(), 0)
                    .takeUntil(granted -> !granted)
                    .last(true)
                    .flatMap(all -> all ? Mono.fromSupplier(taken::complete) : taken.releaseAll().then(Mono.<MultiLease>empty()))
                    .onErrorResume(e -> taken.releaseAll().then(Mono.error(e)))
                    .filter(taken::handOver)
                    .doOnCancel(taken::releaseDetached);
        });
    }

    @Override
    public <T> Mono<T> withLocks(Collection<String> names, LockOptions options,
                                 Function<? super MultiLease, ? extends Mono<T>> body) {
        List<String> sorted = MultiLock.canonicalOrder(names);
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(body, "body");
        return Mono.defer(() -> nest(sorted, 0, List.of(), options, deadline(options), body));
    }

    /* Each name's withLock encloses the next: a loss at any level cancels everything inside it. */
    private <T> Mono<T> nest(List<String> names, int i, List<Lease> taken, LockOptions options, long deadline,
                             Function<? super MultiLease, ? extends Mono<T>> body) {
        if (i == names.size()) {
            return Mono.defer(() -> body.apply(DefaultMultiLease.scoped(taken)));
        }
        String name = names.get(i);
        return Mono.defer(() -> client.withLock(name, optionsFor(name, options, deadline),
                lease -> nest(names, i + 1, append(taken, lease), options, deadline, body)));
    }

    @Override
    public <T> Flux<T> withLocksMany(Collection<String> names, LockOptions options,
                                     Function<? super MultiLease, ? extends Publisher<T>> body) {
        List<String> sorted = MultiLock.canonicalOrder(names);
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(body, "body");
        return Flux.defer(() -> nestMany(sorted, 0, List.of(), options, deadline(options), body));
    }

    private <T> Flux<T> nestMany(List<String> names, int i, List<Lease> taken, LockOptions options, long deadline,
                                 Function<? super MultiLease, ? extends Publisher<T>> body) {
        if (i == names.size()) {
            return Flux.defer(() -> body.apply(DefaultMultiLease.scoped(taken)));
        }
        String name = names.get(i);
        return Flux.defer(() -> client.withLockMany(name, optionsFor(name, options, deadline),
                lease -> nestMany(names, i + 1, append(taken, lease), options, deadline, body)));
    }

    @Override
    public Flux<MultiLease> hold(Collection<String> names, LockOptions options) {
        Mono<MultiLease> acquire = acquire(names, options);
        // Not Flux.usingWhen: a cancel that meets the set on its way into usingWhen can leave it
        // unreleased. Here the set is recorded the moment it arrives, and whichever of "arrived"
        // and "ended" comes second releases it (both sides write their flag, then read the other's).
        return Flux.defer(() -> {
            AtomicReference<MultiLease> held = new AtomicReference<>();
            AtomicBoolean ended = new AtomicBoolean();
            return acquire
                    .doOnNext(set -> {
                        held.set(set);
                        if (ended.get()) {
                            releaseDetached(set);
                        }
                    })
                    .flatMapMany(set -> Flux.just(set).concatWith(set.lost().then(Mono.empty())))
                    .doFinally(signal -> {
                        ended.set(true);
                        MultiLease set = held.get();
                        if (set != null) {
                            releaseDetached(set);
                        }
                    });
        });
    }

    private static void releaseDetached(MultiLease set) {
        set.release().subscribe(null, e -> LOG.warn("could not release every lock of {} (they expire by their TTL): {}",
                set, e.toString()));
    }

    // ---- timing

    private static final long NO_DEADLINE = Long.MIN_VALUE;

    private static long deadline(LockOptions options) {
        Duration wait = options.waitTimeout();
        return wait == null ? NO_DEADLINE : options.clock().nanoTime() + wait.toNanos();
    }

    /** The options for one name: the wait timeout is what is left of the whole set's. */
    private static LockOptions optionsFor(String name, LockOptions options, long deadline) {
        if (deadline == NO_DEADLINE) {
            return options;
        }
        long left = deadline - options.clock().nanoTime();
        if (left <= 0) {
            throw new LockTimeoutException(name, options.waitTimeout());
        }
        return options.mutate().waitTimeout(Duration.ofNanos(left)).build();
    }

    private Mono<Lease> acquireOne(String name, LockOptions options, long deadline) {
        return Mono.defer(() -> client.acquire(name, optionsFor(name, options, deadline)))
                .onErrorMap(LockTimeoutException.class, e -> deadline != NO_DEADLINE
                        && options.clock().nanoTime() - deadline >= 0 ? new LockTimeoutException(name, options.waitTimeout()) : e);
    }

    private static List<Lease> append(List<Lease> taken, Lease lease) {
        List<Lease> next = new ArrayList<>(taken.size() + 1);
        next.addAll(taken);
        next.add(lease);
        return next;
    }

    /**
     * The leases one acquire has taken so far. Once it is aborted (cancel, error, refusal), a
     * lease that still arrives is released at once. Once complete, the set exists but is still
     * ours until it has passed the last operator of the acquire ({@link #handOver}): operators in
     * between may discard a value that meets a cancel, so a cancel before the hand-over releases
     * the set; after it, the set belongs to the subscriber.
     */
    private static final class Taken {
        private final List<Lease> leases = new ArrayList<>(); // guarded by this
        private boolean aborted;
        private DefaultMultiLease complete;
        private boolean handedOver;

        void add(Lease lease) {
            boolean release;
            synchronized (this) {
                release = aborted;
                if (!release) {
                    leases.add(lease);
                }
            }
            if (release) {
                detached(lease);
            }
        }

        /** @return the set, or {@code null} when aborted first */
        MultiLease complete() {
            List<Lease> all;
            synchronized (this) {
                if (aborted) {
                    return null;
                }
                all = List.copyOf(leases);
                leases.clear();
                complete = DefaultMultiLease.owning(all);
                return complete;
            }
        }

        /** @return true when {@code set} may go to the subscriber; false when a cancel came first (and released it) */
        synchronized boolean handOver(MultiLease set) {
            if (aborted) {
                return false;
            }
            handedOver = true;
            return true;
        }

        /** @return what must be released now: the leases taken, or the completed set not handed over */
        private synchronized List<Lease> abort() {
            if (handedOver || aborted) {
                return List.of();
            }
            aborted = true;
            if (complete != null) {
                complete.disarm();
                return complete.leases();
            }
            List<Lease> all = List.copyOf(leases);
            leases.clear();
            return all;
        }

        /** Releases what was taken; the caller waits for it (errors of the releases are logged, not raised). */
        Mono<Void> releaseAll() {
            return Mono.defer(() -> Flux.fromIterable(abort())
                    .flatMap(l -> l.release().onErrorResume(e -> {
                        LOG.warn("could not release lock '{}' of an unfinished set (it expires by its TTL): {}",
                                l.name(), e.toString());
                        return Mono.empty();
                    }))
                    .then());
        }

        /** Releases what was taken, nobody waiting (the subscriber cancelled). */
        void releaseDetached() {
            abort().forEach(Taken::detached);
        }

        private static void detached(Lease l) {
            l.release().subscribe(null, e -> LOG.warn("could not release lock '{}' of a cancelled set (it expires by its TTL): {}",
                    l.name(), e.toString()));
        }
    }
}
