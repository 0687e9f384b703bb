package io.reactivelocks.internal.semaphore;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.Backoff;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.semaphore.SemaphoreState;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockNames;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The engine behind {@link Semaphore}: waiting (notification, earliest expiry, backoff), renewal
 * and loss of each permit, cancel clean-up, observation. Not API; create with {@link Semaphore#create}.
 */
public final class DefaultSemaphore implements Semaphore {

    private static final Logger LOG = Loggers.getLogger(DefaultSemaphore.class);

    private final SemaphoreStore store;
    private final LockOptions defaults;
    private final Scheduler ownScheduler;
    private final Waiters waiters;
    private final Set<PermitHandle> permits = ConcurrentHashMap.newKeySet();
    private final Set<AcquireOp> operations = ConcurrentHashMap.newKeySet();
    private final Set<Mono<Void>> detachedReleases = ConcurrentHashMap.newKeySet();
    private final Sinks.Empty<Void> closedSink = Sinks.empty();
    private final Mono<Void> close;
    private volatile boolean closed;

    /**
     * @param store    the store that decides grants
     * @param defaults options for the methods that take none
     */
    public DefaultSemaphore(SemaphoreStore store, LockOptions defaults) {
        this.store = Objects.requireNonNull(store, "store");
        this.defaults = Objects.requireNonNull(defaults, "options");
        this.ownScheduler = Schedulers.newSingle("reactive-locks-semaphore-" + store.name(), true);
        this.waiters = new Waiters(store);
        this.close = Mono.defer(this::doClose).cache();
        io.reactivelocks.internal.OwnerIds.next(); // seed the generator now, not on the event loop of the first acquire
    }

    @Override
    public LockOptions options() {
        return defaults;
    }

    private static void check(String name, int permits, int count) {
        LockNames.check(name);
        if (permits < 1 || permits > MAX_PERMITS) {
            throw new IllegalArgumentException("permits must be in [1, " + MAX_PERMITS + "], was " + permits);
        }
        if (count < 1 || count > permits) {
            throw new IllegalArgumentException("count must be in [1, permits = " + permits + "], was " + count);
        }
    }

    @Override
    public Mono<List<Lease>> acquire(String name, int permits, int count, LockOptions options) {
        check(name, permits, count);
        Objects.requireNonNull(options, "options");
        return handles(name, permits, count, options, true).map(DefaultSemaphore::snapshots);
    }

    @Override
    public Mono<List<Lease>> tryAcquire(String name, int permits, int count, LockOptions options) {
        check(name, permits, count);
        Objects.requireNonNull(options, "options");
        return handles(name, permits, count, options, false).map(DefaultSemaphore::snapshots);
    }

    @Override
    public <T> Mono<T> withPermit(String name, int permits, LockOptions options, Function<? super Lease, ? extends Mono<T>> body) {
        check(name, permits, 1);
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(body, "body");
        return Mono.usingWhen(handles(name, permits, 1, options, true).map(l -> l.get(0)),
                h -> Mono.defer(() -> body.apply(h.snapshot()))
                        .takeUntilOther(h.lost())
                        .flatMap(v -> h.confirmValid() ? Mono.just(v) : Mono.<T>error(lostError(h)))
                        .switchIfEmpty(Mono.defer(() -> h.confirmValid() ? Mono.empty() : Mono.error(lostError(h)))),
                PermitHandle::release, (h, e) -> h.release(), PermitHandle::release);
    }

    @Override
    public Flux<Lease> hold(String name, int permits, LockOptions options) {
        check(name, permits, 1);
        Objects.requireNonNull(options, "options");
        return Flux.usingWhen(handles(name, permits, 1, options, true).map(l -> l.get(0)),
                PermitHandle::updates, PermitHandle::release, (h, e) -> h.release(), PermitHandle::release);
    }

    @Override
    public Flux<SemaphoreState> observe(String name) {
        LockNames.check(name);
        return Flux.defer(() -> {
            if (closed) {
                return Flux.error(new LockClientClosedException(name));
            }
            return store.events(name)
                    .switchMap(e -> readState(name).expand(s -> s.holders().isEmpty() ? Mono.empty()
                            : Mono.delay(Duration.ofNanos(Math.max(1_000_000, earliest(s) - defaults.clock().nanoTime())),
                                    schedulerFor(defaults)).then(readState(name))))
                    .distinctUntilChanged(s -> s.holders().stream().map(h -> h.owner() + "#" + h.token()).toList())
                    .takeUntilOther(closedSink.asMono());
        });
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
            long at = defaults.clock().nanoTime();
            return within(store.holders(name), defaults)
                    .onErrorMap(e -> mapError(store.name(), name, "read", e))
                    .map(hs -> {
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
        return close;
    }

    private Mono<Void> doClose() {
        closed = true;
        closedSink.tryEmitEmpty();
        for (AcquireOp op : new ArrayList<>(operations)) {
            op.fail(new LockClientClosedException(op.name));
        }
        waiters.closeAll();
        List<Mono<Void>> releases = new ArrayList<>();
        for (PermitHandle h : new ArrayList<>(permits)) {
            releases.add(h.release().onErrorResume(e -> Mono.empty()));
        }
        releases.addAll(detachedReleases);
        return Mono.when(releases).then(Mono.defer(store::close)).doFinally(s -> ownScheduler.dispose());
    }

    // ---- acquire

    private Mono<List<PermitHandle>> handles(String name, int permits, int count, LockOptions options, boolean wait) {
        return Mono.defer(() -> {
            if (closed) {
                return Mono.error(new LockClientClosedException(name));
            }
            AcquireOp op = new AcquireOp(name, permits, count, options, wait);
            return op.run();
        });
    }

    private static List<Lease> snapshots(List<PermitHandle> handles) {
        List<Lease> out = new ArrayList<>(handles.size());
        for (PermitHandle h : handles) {
            out.add(h.snapshot());
        }
        return out;
    }

    private static LockLostException lostError(PermitHandle h) {
        return new LockLostException(h.permit.name(), h.permit.token(), String.valueOf(h.lossReason()));
    }

    /** Thrown inside the retry loop: the store said no permit is free. */
    private static final class Busy extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final Duration earliestExpiry;

        Busy(Duration earliestExpiry) {
            super(null, null, false, false);
            this.earliestExpiry = earliestExpiry;
        }
    }

    /**
     * One acquire: the owner ids exist before the first request, so whatever a request grants can
     * be released. Requests are not cancelled once sent: each one settles on its own, and one
     * that grants after the acquire ended (cancel, error, timeout) is released then.
     */
    private final class AcquireOp {
        final String name;
        private final int permits;
        private final List<String> owners;
        private final LockOptions options;
        private final boolean wait;
        private final Scheduler scheduler;
        private final Sinks.Empty<Void> failed = Sinks.empty();
        private volatile LockException failure;
        // guarded by this
        private boolean ended;
        private boolean handedOver;
        private int inFlight;          // requests sent and not settled
        private boolean outcomeUnknown; // a request failed: it may still have been granted
        private List<PermitHandle> granted;

        AcquireOp(String name, int permits, int count, LockOptions options, boolean wait) {
            this.name = name;
            this.permits = permits;
            this.options = options;
            this.wait = wait;
            this.scheduler = schedulerFor(options);
            List<String> ids = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                ids.add(io.reactivelocks.internal.OwnerIds.next());
            }
            this.owners = List.copyOf(ids);
        }

        Mono<List<PermitHandle>> run() {
            operations.add(this);
            if (closed) {
                operations.remove(this);
                return Mono.error(new LockClientClosedException(name));
            }
            Waiters.Waiter waiter = wait ? waiters.join(name) : null;
            Mono<List<PermitHandle>> attempts = Mono.defer(this::attempt);
            if (wait) {
                attempts = attempts.retryWhen(reactor.util.retry.Retry.from(signals -> signals.concatMap(rs ->
                        rs.failure() instanceof Busy busy ? pause(waiter, busy, rs.totalRetries() + 1).thenReturn(rs.totalRetries())
                                : isTransient(rs.failure()) ? Mono.delay(Duration.ofNanos(backoffNanos(options, rs.totalRetries() + 1)), scheduler)
                                : Mono.error(rs.failure()))));
                Duration timeout = options.waitTimeout();
                if (timeout != null) {
                    attempts = attempts.timeout(timeout, Mono.error(() -> new LockTimeoutException(name, timeout)), scheduler);
                }
            } else {
                attempts = attempts.onErrorResume(Busy.class, b -> Mono.empty());
            }
            return attempts
                    .takeUntilOther(failed.asMono())
                    .switchIfEmpty(Mono.defer(() -> failure != null ? Mono.error(failure) : Mono.empty()))
                    .filter(this::handOver)
                    .doOnError(e -> end())
                    .doOnCancel(this::end)
                    .doOnSuccess(x -> end())
                    .doFinally(s -> {
                        operations.remove(this);
                        if (waiter != null) {
                            waiter.leave();
                        }
                    });
        }

        void fail(LockException e) {
            failure = e;
            failed.tryEmitEmpty();
        }

        private Mono<Void> pause(Waiters.Waiter waiter, Busy busy, long attempt) {
            long backoff = backoffNanos(options, attempt);
            long delay = busy.earliestExpiry == null ? backoff
                    : Math.min(backoff, Math.max(1_000_000, busy.earliestExpiry.toNanos()));
            return Mono.firstWithSignal(waiter.next(), Mono.delay(Duration.ofNanos(delay), scheduler).then());
        }

        private Mono<List<PermitHandle>> attempt() {
            Sinks.One<List<PermitHandle>> answer = Sinks.one();
            long sentAt = options.clock().nanoTime();
            synchronized (this) {
                if (ended) {
                    return Mono.empty();
                }
                if (granted != null) { // an earlier request granted after its wait timed out
                    return Mono.just(granted);
                }
                inFlight++;
            }
            store.tryGrant(name, owners, permits, options.leaseTime())
                    .switchIfEmpty(Mono.error(() -> new IllegalStateException("store answered nothing to a grant")))
                    .subscribe(g -> settle(g, sentAt, answer), e -> {
                        boolean over;
                        synchronized (this) {
                            inFlight--;
                            outcomeUnknown = true;
                            over = ended;
                        }
                        if (over) {
                            releaseOwners(); // unknown outcome after the end: make sure
                        }
                        answer.tryEmitError(mapError(store.name(), name, "acquire", e));
                    });
            return within(answer.asMono(), options).onErrorMap(e -> e instanceof Busy ? e : mapError(store.name(), name, "acquire", e));
        }

        private void settle(io.reactivelocks.spi.semaphore.PermitGrant g, long sentAt, Sinks.One<List<PermitHandle>> answer) {
            if (g instanceof io.reactivelocks.spi.semaphore.PermitGrant.Busy busy) {
                synchronized (this) {
                    inFlight--; // a definite no: this request holds nothing
                }
                answer.tryEmitError(new Busy(busy.earliestExpiry()));
                return;
            }
            var grant = (io.reactivelocks.spi.semaphore.PermitGrant.Granted) g;
            long validUntil = sentAt + options.validityNanos(grant.ttl());
            List<PermitHandle> hs = null;
            List<PermitHandle> again = null;
            synchronized (this) {
                inFlight--;
                if (granted != null) {
                    again = granted; // the same owners again (an idempotent retry): the permits we have
                } else if (!ended) {
                    hs = new ArrayList<>(owners.size());
                    for (int i = 0; i < owners.size(); i++) {
                        hs.add(new PermitHandle(DefaultSemaphore.this,
                                new io.reactivelocks.spi.HeldLock(name, owners.get(i), grant.tokens().get(i)), options, scheduler, validUntil));
                    }
                    granted = hs;
                }
            }
            if (again != null) {
                answer.tryEmitValue(again);
                return;
            }
            if (hs == null) { // the acquire ended before this grant arrived
                releaseOwners();
                answer.tryEmitEmpty();
                return;
            }
            DefaultSemaphore.this.permits.addAll(hs);
            hs.forEach(h -> h.start(sentAt));
            if (closed) {
                hs.forEach(h -> h.release().subscribe(null, e -> { }));
            }
            if (answer.tryEmitValue(hs).isFailure()) {
                LOG.debug("grant of semaphore '{}' arrived after its request timeout; the next attempt takes it", name);
            }
        }

        /** @return true when the handles may go to the subscriber; false when the acquire ended first (and released them) */
        private synchronized boolean handOver(List<PermitHandle> hs) {
            if (ended) {
                return false;
            }
            handedOver = true;
            return true;
        }

        /** The acquire is over; what it may hold and did not hand over is released. */
        private void end() {
            List<PermitHandle> release = null;
            boolean releaseIds;
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
                if (handedOver) {
                    return;
                }
                release = granted;
                // nothing to release after definite refusals only; a request still in flight is
                // released when it settles, but release now too in case its answer never comes
                releaseIds = granted == null && (inFlight > 0 || outcomeUnknown);
            }
            if (release != null) {
                release.forEach(h -> h.release().subscribe(null, e -> { }));
            } else if (releaseIds) {
                releaseOwners();
            }
        }

        private void releaseOwners() {
            for (String owner : owners) {
                releaseDetached(name, owner, options);
            }
        }
    }

    // ---- shared mechanics

    Scheduler schedulerFor(LockOptions options) {
        return options.scheduler() != null ? options.scheduler() : ownScheduler;
    }

    String storeName() {
        return store.name();
    }

    void forget(PermitHandle h) {
        permits.remove(h);
    }

    Mono<List<RenewOutcome>> renewOnStore(List<RenewRequest> batch, LockOptions options) {
        return within(Mono.defer(() -> store.renew(batch))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("store answered nothing to a renewal"))), options);
    }

    Mono<Void> releaseOnStore(String name, String owner, LockOptions options) {
        return within(Mono.defer(() -> store.release(name, owner)), options)
                .onErrorMap(e -> mapError(store.name(), name, "release", e))
                .then();
    }

    void releaseDetached(String name, String owner, LockOptions options) {
        Mono<Void> release = releaseOnStore(name, owner, options)
                .onErrorResume(e -> {
                    LOG.warn("could not release a permit of semaphore '{}' (it expires by its TTL): {}", name, e.toString());
                    return Mono.empty();
                })
                .cache();
        detachedReleases.add(release);
        release.doFinally(s -> detachedReleases.remove(release)).subscribe();
    }

    private <T> Mono<T> within(Mono<T> source, LockOptions options) {
        Duration timeout = options.requestTimeout();
        return source.timeout(Mono.delay(timeout, schedulerFor(options)),
                Mono.error(() -> new TimeoutException("no answer within " + timeout)));
    }

    static long backoffNanos(LockOptions options, long attempt) {
        return Backoff.delayNanos(options.backoff(), attempt);
    }

    static LockException mapError(String store, String name, String operation, Throwable t) {
        return BackendErrors.of(store, BackendErrors::isIoOrTimeout).map(name, operation + " of semaphore", t);
    }

    static boolean isTransient(Throwable t) {
        return BackendErrors.isTransient(t);
    }

    @Override
    public String toString() {
        return "Semaphore{" + store.name() + "}";
    }
}
