package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
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
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

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
        this.waiters = new Waiters(store::wakeUps, schedulerFor(defaults));
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
            for (AcquireOperation op : operations.snapshot()) {
                out.add(op.name());
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
     * One acquire, on the engine's one acquire loop ({@link AcquireOperation}, the lock's too): owner ids are
     * made before the first attempt; every grant that arrives after the acquire ended is released.
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
        return AcquireOperation.grants(this, name, count, call, options, wait, refusalLeaves, wakesAll);
    }

    // ---- what an acquire asks of its engine (LeaseOwner)

    @Override
    boolean isClosed() {
        return closed;
    }

    @Override
    Runnable pendingCleanUp(String name) {
        return cleanUps.pending(name);
    }

    @Override
    RequestDeadlines deadlines(Scheduler scheduler, io.reactivelocks.LockClock clock) {
        return timers.deadlines(scheduler, clock);
    }

    @Override
    SafeListener acquireListener(String name, reactor.util.context.ContextView context) {
        return listener.active() ? listener.forAcquire(name, context) : listener;
    }

    @Override
    LeaseHandle newLease(String name, String owner, long token, LockOptions options, Scheduler scheduler, long validUntil,
                         SafeListener leaseListener) {
        LeaseHandle h = new LeaseHandle(this, new HeldLock(name, owner, token), options, scheduler,
                timers.renewals(scheduler, options.clock()), validUntil, leaseListener);
        grants.add(h);
        if (closed) {
            h.release().subscribe(null, e -> { }); // tracked: close() waits for it
        }
        return h;
    }

    @Override
    reactor.core.Disposable wakes(String name, boolean wakesAll, @Nullable Object mark, AcquireOperation op) {
        return waiters.join(name, wakesAll, mark, op::wakeUp, op::notificationsLive)::leave;
    }

    @Override
    @Nullable Object releaseMark(String name) {
        return waiters.releaseMark(name);
    }

    @Override
    LockException acquireError(String name, Throwable error) {
        return mapError(name, "acquire", error);
    }

    @Override
    boolean queuesGrants() {
        return store.queues();
    }

    @Override
    Mono<Void> awaitTurn(String name, List<String> owners) {
        return Mono.defer(() -> store.awaitTurn(name, owners));
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
                    .onErrorMap(StateObserver::oneError)
                    .distinctUntilChanged(identity)
                    .takeUntilOther(closedSink.asMono());
        });
    }

    @Override
    Flux<LockEvent> events(String name) {
        return store.wakeUps(name); // a lease's revocation: no grants needed
    }

    /** @return closes: pending acquires fail, grants are released, the store closes; idempotent */
    public Mono<Void> close() {
        return close;
    }

    private Mono<Void> doClose() {
        closed = true;
        closedSink.tryEmitEmpty();
        for (AcquireOperation op : operations.snapshot()) {
            op.closed();
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

    // ---- shared mechanics

    /**
     * @param options options of a call
     * @return the scheduler of its timers: the options' one, else the engine's own
     */
    @Override
    public Scheduler schedulerFor(LockOptions options) {
        return options.scheduler() != null ? options.scheduler() : ownScheduler;
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
        return releaseDetached(name, owner, options, true);
    }

    /**
     * @param granted whether the store granted to {@code owner} (a lost grant); an ended acquire's clean-up of
     *                what its requests may have left is not worth a WARN line when the store is down
     */
    @Override
    Mono<Void> releaseDetached(String name, String owner, LockOptions options, boolean granted) {
        // bounded by the lease time (the grant expires by then anyway), not the request timeout: close() waits
        // for it up to its own bound, so a release a loaded store is still working on is not forgotten and the
        // store closed under it
        int epoch = outage.epoch();
        Mono<Void> release = cleanUps.tracked(name, Mono.defer(() -> store.release(name, owner))
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
                    return Mono.<Void>empty();
                })
                .cache();
        release.subscribe();
        return release;
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

    /**
     * @param name      the name
     * @param operation what was asked, for the message
     * @param t         what the store answered
     * @return the typed error for users
     */
    public LockException mapError(String name, String operation, Throwable t) {
        return BackendErrors.of(store.name(), BackendErrors::isIoOrTimeout).map(name, operation + " of " + concept, t);
    }

    @Override
    public String toString() {
        return concept + "{" + store.name() + "}";
    }
}
