package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.GrantStore;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * The engine behind the concepts whose grants come from one grant-or-busy store call: waiting
 * (notification, earliest expiry, backoff), renewal and loss of each grant, cancel clean-up, scoped
 * use, hold streams, observation and close. The concept's engine (the semaphore, the read-write
 * lock) checks arguments and says how one attempt asks its store. Not API.
 */
public final class GrantEngine extends LeaseOwner {

    private static final Logger LOG = Loggers.getLogger(GrantEngine.class);

    /** One attempt of an acquire: asks the store to grant to {@code owners} for {@code leaseTime}. Not API. */
    @FunctionalInterface
    public interface GrantCall {
        /**
         * @param owners    the owner ids of the acquire (fixed before the first attempt; new ones only after a grant that
         *                  arrived late expired before it could be handed over)
         * @param leaseTime the TTL to ask for
         * @return the store's answer
         */
        Mono<PermitGrant> tryGrant(List<String> owners, Duration leaseTime);
    }

    private final GrantStore store;
    private final String concept;
    private final LockOptions defaults;
    private final Scheduler ownScheduler;
    private final Waiters waiters;
    private final Set<LeaseHandle> grants = ConcurrentHashMap.newKeySet();
    private final Set<AcquireOp> operations = ConcurrentHashMap.newKeySet();
    /** Releases under way and requests of ended acquires still in flight: close() waits for them. */
    private final CleanUpBook cleanUps = new CleanUpBook();
    private final Sinks.Empty<Void> closedSink = Sinks.empty();
    private final Mono<Void> close;
    private final SafeListener listener;
    private final java.util.concurrent.atomic.LongAdder unconfirmedReleases = new java.util.concurrent.atomic.LongAdder();
    private final LockClientMetrics metrics = new Metrics();
    /** Request timeouts, grant deadlines and renewal batches, as the mutex engine keeps them (see {@link EngineTimers}). */
    private final EngineTimers timers;
    private final StoreOutage outage;
    private volatile boolean closed;

    /**
     * @param store            the concept's store
     * @param concept          the concept's name in messages, e.g. {@code "semaphore"}
     * @param defaults         options for the methods that take none
     */
    public GrantEngine(GrantStore store, String concept, LockOptions defaults) {
        this.store = Objects.requireNonNull(store, "store");
        this.concept = Objects.requireNonNull(concept, "concept");
        this.defaults = Objects.requireNonNull(defaults, "options");
        this.listener = SafeListener.of(defaults.listener());
        this.ownScheduler = OwnSchedulers.create("reactive-locks-" + concept + "-" + store.name());
        this.waiters = new Waiters(store::events);
        this.timers = new EngineTimers(ownScheduler, defaults.clock(), store::renew, store.name());
        this.outage = new StoreOutage(store.name(), concept);
        this.close = Mono.defer(this::doClose).cache();
        GrantRequest.newOwner(); // seed the generator now, not on the event loop of the first acquire
    }

    /** @return the options used by the methods that take none */
    public LockOptions options() {
        return defaults;
    }

    /** @return the concept's name in messages */
    String concept() {
        return concept;
    }

    /** @return the live view of this engine's grants, acquires in progress and unconfirmed releases */
    public LockClientMetrics metrics() {
        return metrics;
    }

    /** A release after a scoped body that the store did not confirm: counted. */
    @Override
    void releaseUnconfirmed() {
        unconfirmedReleases.increment();
    }

    /** The live view of the engine's registries, as {@link LockClientMetrics} describes. */
    private final class Metrics implements LockClientMetrics {
        @Override
        public List<Lease> heldLeases() {
            List<Lease> out = new ArrayList<>();
            for (LeaseHandle h : grants) {
                out.add(h.snapshot());
            }
            return out;
        }

        @Override
        public int heldLeaseCount() {
            return grants.size();
        }

        @Override
        public List<String> pendingAcquires() {
            List<String> out = new ArrayList<>();
            for (AcquireOp op : operations) {
                out.add(op.name);
            }
            return out;
        }

        @Override
        public int pendingAcquireCount() {
            return operations.size();
        }

        @Override
        public long unconfirmedReleaseCount() {
            return unconfirmedReleases.sum();
        }

        @Override
        public String toString() {
            return concept + "Metrics{held " + grants.size() + ", pending " + operations.size() + "}";
        }
    }

    /**
     * One acquire: owner ids are made before the first attempt; every grant that arrives after the
     * acquire ended is released.
     *
     * @param name          the name
     * @param count         how many owners (grants) at once
     * @param call          how one attempt asks the store
     * @param options       options of this call
     * @param wait          whether to wait while busy (else one attempt, empty when busy)
     * @param refusalLeaves whether a refused attempt may leave something of its owners on the store
     *                      (a waiting writer's intent, a queue place), so the end of an unsuccessful acquire releases
     * @param wakesAll      whether a release, while this acquire waits, wakes every local waiter of the name (one
     *                      release may let all of them in: a waiting reader) instead of one
     * @return the grants, or empty (no waiting, busy)
     */
    public Mono<List<LeaseHandle>> acquire(String name, int count, GrantCall call, LockOptions options,
            boolean wait, boolean refusalLeaves, boolean wakesAll) {
        return Mono.deferContextual(context -> {
            if (closed) {
                return Mono.error(new LockClientClosedException(name));
            }
            SafeListener l = listener.active() ? listener.forAcquire(name, context) : listener;
            return new AcquireOp(name, count, call, options, wait, refusalLeaves, wakesAll, l).run();
        });
    }

    /**
     * @param handles grants
     * @return their leases as users see them
     */
    public static List<Lease> snapshots(List<LeaseHandle> handles) {
        List<Lease> out = new ArrayList<>(handles.size());
        for (LeaseHandle h : handles) {
            out.add(h.snapshot());
        }
        return out;
    }

    /**
     * @param handle a grant
     * @return its lease as users see it now
     */
    public static Lease snapshot(LeaseHandle handle) {
        return handle.snapshot();
    }

    /**
     * Scoped use: runs {@code body} under the grant, releases on complete, error and cancel; a grant
     * lost while the body runs cancels it and ends in {@link LockLostException}.
     *
     * @param grant the acquire of one grant
     * @param body  the work
     * @param <T>   the body's result type
     * @return the body's result
     */
    public <T> Mono<T> withGrant(Mono<LeaseHandle> grant, Function<? super Lease, ? extends Mono<T>> body) {
        return Mono.usingWhen(grant,
                h -> Mono.defer(() -> body.apply(h.snapshot()))
                        .takeUntilOther(h.lost())
                        .flatMap(v -> h.confirmValid() ? Mono.just(v) : Mono.<T>error(lostError(h)))
                        .switchIfEmpty(Mono.defer(() -> h.confirmValid() ? Mono.empty() : Mono.error(lostError(h)))),
                LeaseHandle::releaseAfterWork, (h, e) -> h.releaseAfterWork(), LeaseHandle::release);
    }

    /**
     * @param name    the name
     * @param options the caller's options
     * @param grant   the acquire of one grant with the given options (asked again, with the wait
     *                that is left, when a grant was lost before delivery: {@link io.reactivelocks.internal.HoldAgain})
     * @return the hold stream: the lease, then one after each renewal; completes on loss; cancel releases
     */
    public Flux<Lease> hold(String name, LockOptions options, Function<LockOptions, Mono<LeaseHandle>> grant) {
        return HoldAgain.hold(name, options, grant, LeaseHandle::updates, LeaseHandle::release);
    }

    /**
     * Observation: on each (re-)subscription of the store's events reads the state, then again at
     * the earliest expiry while anything is held; distinct states only; ends on close.
     *
     * @param name     the name
     * @param read     reads the state (its holders' deadlines on the options' clock)
     * @param earliest the earliest deadline of a state, {@link Long#MAX_VALUE} when nothing expires
     * @param identity what makes two states the same
     * @param <S>      the state type
     * @return the state stream
     */
    public <S> Flux<S> observe(String name, Mono<S> read, ToLongFunction<S> earliest, Function<S, Object> identity) {
        Mono<S> readMapped = read.onErrorMap(e -> mapError(name, "read", e));
        return Flux.defer(() -> {
            if (closed) {
                return Flux.error(new LockClientClosedException(name));
            }
            return store.events(name)
                    .switchMap(e -> within(readMapped, defaults).expand(s -> earliest.applyAsLong(s) == Long.MAX_VALUE ? Mono.empty()
                            : Mono.delay(Duration.ofNanos(Math.max(1_000_000, earliest.applyAsLong(s) - defaults.clock().nanoTime())),
                                    schedulerFor(defaults)).then(within(readMapped, defaults))))
                    .distinctUntilChanged(identity)
                    .takeUntilOther(closedSink.asMono());
        });
    }

    @Override
    Flux<LockEvent> events(String name) {
        return store.events(name);
    }

    /** @return closes: pending acquires fail, grants are released, the store closes; idempotent */
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
        for (LeaseHandle h : new ArrayList<>(grants)) {
            h.release().subscribe(null, e -> { }); // tracked: drained() waits for it
        }
        // every request of an ended acquire settles within its request timeout, and its release
        // within another; past that, name what is left and close the store anyway
        Duration bound = defaults.requestTimeout().multipliedBy(2).plusSeconds(1);
        Mono<Void> drained = cleanUps.drained()
                .timeout(Mono.delay(bound, ownScheduler), Mono.fromRunnable(() -> LOG.warn(
                        "{} on {} closed before the store confirmed the release of {} (they stay until their lease or session ends)",
                        concept, store.name(), cleanUps.names())));
        return OwnSchedulers.closeThenDispose(drained.then(Mono.fromRunnable(timers::close)).then(Mono.defer(store::close)), ownScheduler);
    }

    private static LockLostException lostError(LeaseHandle h) {
        return new LockLostException(h.lock.name(), h.lock.token(), String.valueOf(h.lossReason()));
    }

    /**
     * A "busy" answer racing a cancel reaches operators already cancelled, which hand it to Reactor's
     * dropped-error hook (an ERROR log line per race in cancel storms): an expected outcome, not an
     * error; anything else dropped goes to the global hook as before.
     */
    private static final java.util.function.Function<reactor.util.context.Context, reactor.util.context.Context> DROPPED_BUSY =
            ctx -> ctx.put("reactor.onErrorDropped.local", (java.util.function.Consumer<Throwable>) e -> {
                if (!(e instanceof Busy)) {
                    reactor.core.publisher.Operators.onErrorDropped(e, reactor.util.context.Context.empty());
                }
            });

    /** Thrown inside the retry loop: the store said busy. */
    private static final class Busy extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Duration earliestExpiry;
        /** The store granted, but the answer came after the grant's validity: given back, ask again at once. */
        final boolean expired;

        Busy(Duration earliestExpiry) {
            this(earliestExpiry, false);
        }

        Busy(Duration earliestExpiry, boolean expired) {
            super(null, null, false, false);
            this.earliestExpiry = earliestExpiry;
            this.expired = expired;
        }
    }

    /**
     * One acquire: the owner ids exist before the first request, so whatever a request grants can
     * be released. Requests are not cancelled once sent: each one settles on its own, and one
     * that grants after the acquire ended (cancel, error, timeout) is released then.
     */
    private final class AcquireOp {
        final String name;
        private final GrantCall call;
        // guarded by this: replaced when a late grant expired before it could be handed over
        private List<String> owners;
        private final LockOptions options;
        private final boolean wait;
        private final boolean refusalLeaves;
        private final boolean wakesAll;
        private final Scheduler scheduler;
        private final SafeListener listener;
        private final long startedAt;
        private final Sinks.Empty<Void> failed = Sinks.empty();
        private volatile LockException failure;
        // guarded by this
        private boolean ended;
        private boolean handedOver;
        private boolean sent;           // a request was sent
        private int inFlight;          // requests sent and not settled
        private boolean outcomeUnknown; // a request failed: it may still have been granted
        private List<LeaseHandle> granted;
        private Waiters.Waiter waiter;  // joined at the first busy answer
        private boolean left;           // the acquire is over: no waiter any more
        private Runnable settling;      // ended with requests in flight: close() waits for them

        AcquireOp(String name, int count, GrantCall call, LockOptions options, boolean wait, boolean refusalLeaves,
                boolean wakesAll, SafeListener listener) {
            this.name = name;
            this.listener = listener;
            this.startedAt = options.clock().nanoTime();
            this.wakesAll = wakesAll;
            this.call = call;
            this.options = options;
            this.wait = wait;
            this.refusalLeaves = refusalLeaves;
            this.scheduler = schedulerFor(options);
            this.owners = freshIds(count);
        }

        private static List<String> freshIds(int count) {
            List<String> ids = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                ids.add(GrantRequest.newOwner());
            }
            return List.copyOf(ids);
        }

        /**
         * A grant that arrived after its request timed out is handed over by a later attempt — unless
         * its validity (counted from that old request) has passed meanwhile: then it is lost (and
         * released), and the acquire goes on under new owner ids, so that the release of the old
         * ones cannot undo a new grant. Guarded by this.
         *
         * @return the expired handles to lose (outside the lock), or null when {@code hs} are valid
         */
        private List<LeaseHandle> retireIfExpired(List<LeaseHandle> hs, long now) {
            for (LeaseHandle h : hs) {
                if (!h.isActive() || now - h.validUntil() >= 0) {
                    if (granted == hs) {
                        granted = null;
                    }
                    owners = freshIds(owners.size());
                    return hs;
                }
            }
            return null;
        }

        Mono<List<LeaseHandle>> run() {
            operations.add(this);
            if (closed) {
                operations.remove(this);
                return Mono.error(new LockClientClosedException(name));
            }
            Mono<List<LeaseHandle>> attempts = Mono.defer(this::attempt).flatMap(this::stillValid);
            if (wait) {
                attempts = attempts.retryWhen(Retry.from(signals -> signals.concatMap(rs ->
                        rs.failure() instanceof Busy busy ? (busy.expired ? Mono.just(rs.totalRetries())
                                        : pause(busy, rs.totalRetries() + 1).thenReturn(rs.totalRetries()))
                                : isTransient(rs.failure()) ? Mono.delay(Duration.ofNanos(backoffNanos(options, rs.totalRetries() + 1)), scheduler)
                                : Mono.error(rs.failure()))));
                Duration timeout = options.waitTimeout();
                if (timeout != null) {
                    attempts = attempts.timeout(timeout, Mono.error(() -> new LockTimeoutException(name, timeout)), scheduler);
                }
            } else {
                // a single attempt whose grant came back expired asks once more, then answers as for a busy name
                attempts = attempts
                        .retryWhen(Retry.from(signals -> signals.concatMap(rs ->
                                rs.failure() instanceof Busy busy && busy.expired && rs.totalRetries() == 0
                                        ? Mono.just(rs.totalRetries()) : Mono.error(rs.failure()))))
                        .onErrorResume(Busy.class, b -> {
                            listener.onContended(name);
                            return Mono.empty();
                        });
            }
            return attempts
                    .contextWrite(DROPPED_BUSY)
                    .takeUntilOther(failed.asMono())
                    .switchIfEmpty(Mono.defer(() -> failure != null ? Mono.error(failure) : Mono.empty()))
                    .filter(this::handOver)
                    .doOnError(e -> {
                        end();
                        if (listener.active()) {
                            listener.onAcquireFailed(name, e, waited());
                        }
                    })
                    .doOnCancel(() -> {
                        end();
                        if (listener.active()) {
                            listener.onAcquireCancelled(name, waited());
                        }
                    })
                    .doOnSuccess(hs -> {
                        end();
                        if (hs != null && listener.active()) {
                            Duration waited = waited();
                            for (LeaseHandle h : hs) {
                                listener.onAcquired(name, h.lock.token(), waited);
                            }
                        }
                    })
                    .doFinally(s -> {
                        operations.remove(this);
                        leave();
                    });
        }

        /**
         * A grant whose answer came so late that its validity (counted from its request) has passed is
         * not handed over: it is lost (and released), and the acquire asks again under new owner ids
         * (a try ends empty).
         */
        private Mono<List<LeaseHandle>> stillValid(List<LeaseHandle> hs) {
            List<LeaseHandle> expired;
            synchronized (this) {
                expired = retireIfExpired(hs, options.clock().nanoTime());
            }
            if (expired == null) {
                return Mono.just(hs);
            }
            expired.forEach(h -> h.lose("its grant was answered after its validity had passed"));
            return Mono.error(new Busy(null, true));
        }

        private Duration waited() {
            return Duration.ofNanos(options.clock().nanoTime() - startedAt);
        }

        void fail(LockException e) {
            failure = e;
            failed.tryEmitEmpty();
        }

        private Mono<Void> pause(Busy busy, long attempt) {
            long backoff = backoffNanos(options, attempt);
            long delay = busy.earliestExpiry == null ? backoff
                    : Math.min(backoff, Math.max(1_000_000, busy.earliestExpiry.toNanos()));
            if (store.queues()) {
                // the store keeps this acquire's place and wakes it when what stands before it goes:
                // no shared change stream that would wake every waiting client on each change. The
                // timer is only a safety net then (a watch the store lost): not before the backoff's
                // cap or a third of the lease time, so waiters in line do not poll the store
                long safety = Math.max(options.backoff().maxBackoff.toNanos(), options.leaseTime().toNanos() / 3);
                long cap = busy.earliestExpiry == null ? safety : Math.min(safety, Math.max(1_000_000, busy.earliestExpiry.toNanos()));
                Mono<Void> net = Mono.delay(Duration.ofNanos(cap), scheduler).then();
                List<String> ids;
                synchronized (this) {
                    ids = owners;
                }
                return Mono.firstWithSignal(Mono.defer(() -> store.awaitTurn(name, ids)).onErrorResume(e -> net), net);
            }
            Mono<Void> timer = Mono.delay(Duration.ofNanos(delay), scheduler).then();
            Waiters.Waiter w = waiter();
            return w == null ? timer : Mono.firstWithSignal(w.next(), timer);
        }

        /**
         * @return this acquire's waiter, joined at the first busy answer (so an acquire granted at
         *         once never subscribes to the store's events); null once the acquire is over
         */
        private synchronized Waiters.Waiter waiter() {
            if (!left && waiter == null) {
                waiter = waiters.join(name, wakesAll);
            }
            return waiter;
        }

        private void leave() {
            Waiters.Waiter w;
            synchronized (this) {
                left = true;
                w = waiter;
                waiter = null;
            }
            if (w != null) {
                w.leave();
            }
        }

        private Mono<List<LeaseHandle>> attempt() {
            Sinks.One<List<LeaseHandle>> answer = Sinks.one();
            long sentAt = options.clock().nanoTime();
            List<String> ids;
            List<LeaseHandle> expired = null;
            synchronized (this) {
                if (ended) {
                    return Mono.empty();
                }
                if (granted != null) { // an earlier request granted after its wait timed out
                    expired = retireIfExpired(granted, sentAt);
                    if (expired == null) {
                        return Mono.just(granted);
                    }
                }
                ids = owners;
                inFlight++;
                sent = true;
            }
            if (expired != null) {
                expired.forEach(h -> h.lose("its grant arrived after the request timeout and expired before it was handed over"));
            }
            int epoch = outage.epoch();
            Mono.defer(() -> call.tryGrant(ids, options.leaseTime()))
                    .switchIfEmpty(Mono.error(() -> new IllegalStateException("store answered nothing to a grant")))
                    .subscribe(g -> {
                        outage.answered();
                        settle(g, sentAt, answer, ids);
                        settled();
                    }, e -> {
                        outage.failed(mapError(name, "acquire", e), epoch);
                        boolean over;
                        synchronized (this) {
                            inFlight--;
                            outcomeUnknown = true;
                            over = ended || ids != owners;
                        }
                        if (over) {
                            releaseOwners(ids); // unknown outcome after the end (or of retired ids): make sure
                        }
                        settled();
                        answer.tryEmitError(mapError(name, "acquire", e));
                    });
            return within(answer.asMono(), options).onErrorMap(e -> e instanceof Busy ? e : mapError(name, "acquire", e));
        }

        /**
         * A request settled (its release, if it needs one, already under way and in the book): once
         * the acquire is over and none is in flight any more, close() need not wait for it.
         */
        private void settled() {
            Runnable s;
            synchronized (this) {
                if (!ended || inFlight > 0 || settling == null) {
                    return;
                }
                s = settling;
                settling = null;
            }
            s.run();
        }

        private void settle(PermitGrant g, long sentAt, Sinks.One<List<LeaseHandle>> answer, List<String> ids) {
            if (g instanceof PermitGrant.Busy busy) {
                boolean over;
                synchronized (this) {
                    inFlight--; // a definite no: this request holds nothing (but may have left an intent)
                    over = ended || ids != owners;
                }
                if (over && refusalLeaves) {
                    releaseOwners(ids);
                }
                answer.tryEmitError(new Busy(busy.earliestExpiry()));
                return;
            }
            var grant = (PermitGrant.Granted) g;
            long validUntil = sentAt + options.validityNanos(grant.ttl());
            List<LeaseHandle> hs = null;
            List<LeaseHandle> again = null;
            List<LeaseHandle> expired = null;
            boolean retired = false;
            synchronized (this) {
                inFlight--;
                if (ids != owners) {
                    retired = true; // granted to ids given up after a late grant expired: not ours any more
                } else if (granted != null) {
                    // the same owners again (an idempotent retry): the grants we have, if still valid
                    expired = retireIfExpired(granted, options.clock().nanoTime());
                    again = expired == null ? granted : null;
                } else if (!ended) {
                    hs = new ArrayList<>(ids.size());
                    for (int i = 0; i < ids.size(); i++) {
                        hs.add(newGrant(new HeldLock(name, ids.get(i), grant.tokens().get(i)), options, scheduler, validUntil, listener));
                    }
                    granted = hs;
                }
            }
            if (retired || expired != null) {
                if (expired != null) {
                    expired.forEach(h -> h.lose("its grant arrived after the request timeout and expired before it was handed over"));
                } else {
                    releaseOwners(ids);
                }
                answer.tryEmitError(new Busy(null, expired != null));
                return;
            }
            if (again != null) {
                answer.tryEmitValue(again);
                return;
            }
            if (hs == null) { // the acquire ended before this grant arrived
                releaseOwners(ids);
                answer.tryEmitEmpty();
                return;
            }
            grants.addAll(hs);
            hs.forEach(h -> h.start(sentAt));
            if (closed) {
                hs.forEach(h -> h.release().subscribe(null, e -> { }));
            }
            if (answer.tryEmitValue(hs).isFailure()) {
                LOG.debug("grant of {} '{}' arrived after its request timeout; the next attempt takes it", concept, name);
            }
        }

        /** @return true when the handles may go to the subscriber; false when the acquire ended first (and released them) */
        private synchronized boolean handOver(List<LeaseHandle> hs) {
            if (ended) {
                return false;
            }
            handedOver = true;
            return true;
        }

        /** The acquire is over; what it may hold and did not hand over is released. */
        private void end() {
            List<LeaseHandle> release = null;
            boolean releaseIds;
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
                if (handedOver) {
                    return;
                }
                if (inFlight > 0) {
                    // close() waits until these requests settled and what they granted was given back
                    settling = cleanUps.pending(name);
                }
                release = granted;
                // nothing to release after definite refusals only (unless a refusal leaves an
                // intent); a request still in flight is released when it settles, but release now
                // too in case its answer never comes
                releaseIds = granted == null && (inFlight > 0 || outcomeUnknown || (refusalLeaves && sent));
            }
            if (release != null) {
                release.forEach(h -> h.release().subscribe(null, e -> { }));
            } else if (releaseIds) {
                List<String> ids;
                synchronized (this) {
                    ids = owners;
                }
                releaseOwners(ids);
            }
        }

        private void releaseOwners(List<String> ids) {
            for (String owner : ids) {
                releaseDetached(name, owner, options, false);
            }
        }
    }

    // ---- shared mechanics

    /**
     * @param options options of a call
     * @return the scheduler of its timers: the options' one, else the engine's own
     */
    public Scheduler schedulerFor(LockOptions options) {
        return options.scheduler() != null ? options.scheduler() : ownScheduler;
    }

    /** A grant as a lease of the one engine: its deadline and batched renewal on the timers of its scheduler. */
    private LeaseHandle newGrant(HeldLock lock, LockOptions options, Scheduler scheduler, long validUntil, SafeListener l) {
        return new LeaseHandle(this, lock, options, scheduler, timers.renewals(scheduler, options.clock()), validUntil, l);
    }

    @Override
    void forget(LeaseHandle h) {
        grants.remove(h);
    }

    @Override
    DeadlineHeap leaseDeadlines(Scheduler scheduler, io.reactivelocks.LockClock clock) {
        return timers.leaseDeadlines(scheduler, clock);
    }

    /** @return per lease: the grant stores renew every grant with {@link GrantStore#renew} */
    @Override
    io.reactivelocks.spi.RenewalMode renewalMode() {
        return io.reactivelocks.spi.RenewalMode.PER_LEASE;
    }

    @Override
    Flux<io.reactivelocks.spi.Renewal> sessionRenewals(HeldLock lock, io.reactivelocks.LockClock clock) {
        return Flux.error(new UnsupportedOperationException("a grant store renews per lease"));
    }

    @Override
    StoreOutage outage() {
        return outage;
    }

    /** These grants carry no payload: fails with {@link UnsupportedOperationException}. */
    @Override
    Mono<Boolean> updatePayloadOnServer(HeldLock lock, @org.jspecify.annotations.Nullable String payload, LockOptions options) {
        return Mono.error(new UnsupportedOperationException("a " + concept + " grant carries no payload"));
    }

    @Override
    Mono<Void> trackedReleaseOnServer(String name, String owner, LockOptions options) {
        return cleanUps.tracked(name, within(Mono.defer(() -> store.release(name, owner)), options)
                .onErrorMap(e -> mapError(name, "release", e))
                .then());
    }

    @Override
    Mono<Void> releaseDetached(String name, String owner, LockOptions options) {
        releaseDetached(name, owner, options, true);
        return Mono.empty();
    }

    /**
     * @param granted whether the store granted to {@code owner} (a lost grant); an ended acquire's clean-up of
     *                what its requests may have left is not worth a WARN line when the store is down
     */
    void releaseDetached(String name, String owner, LockOptions options, boolean granted) {
        // bounded by the lease time (the grant expires by then anyway), not the request timeout: close() waits
        // for it up to its own bound, so a release a loaded store is still working on is not forgotten and the
        // store closed under it
        int epoch = outage.epoch();
        cleanUps.tracked(name, Mono.defer(() -> store.release(name, owner))
                        .timeout(options.leaseTime(), schedulerFor(options))
                        .onErrorMap(e -> mapError(name, "release", e))
                        .then())
                .onErrorResume(e -> {
                    outage.failed(e, epoch);
                    if (granted) {
                        LOG.warn("could not release a grant of {} '{}' (it expires by its TTL): {}", concept, name, e.toString());
                    } else {
                        LOG.debug("could not give back what an ended acquire of {} '{}' may have left (it expires by itself): {}",
                                concept, name, e.toString());
                    }
                    return Mono.empty();
                })
                .subscribe();
    }

    /**
     * @param source  a store call
     * @param options options of the call
     * @param <T>     the answer type
     * @return the call bounded by the request timeout
     */
    public <T> Mono<T> within(Mono<T> source, LockOptions options) {
        return timers.deadlines(schedulerFor(options), options.clock()).within(source, options.requestTimeout());
    }

    static long backoffNanos(LockOptions options, long attempt) {
        return Backoff.delayNanos(options.backoff(), attempt);
    }

    /**
     * @param name      the name
     * @param operation what was asked, for the message
     * @param t         what the store answered
     * @return the typed error for users
     */
    public LockException mapError(String name, String operation, Throwable t) {
        return BackendErrors.of(store.name(), BackendErrors::isIoOrTimeout).map(name, operation + " of " + concept, t);
    }

    static boolean isTransient(Throwable t) {
        return BackendErrors.isTransient(t);
    }

    @Override
    public String toString() {
        return concept + "{" + store.name() + "}";
    }
}
