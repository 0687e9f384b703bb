package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockClientMetrics;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockNames;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.RenewalMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The engine behind {@link LockClient}: it turns a {@link LockBackend} into waiting, renewal,
 * loss detection, cancellation clean-up, reentrancy and observation. Not API; create clients
 * with {@link LockClient#create}.
 */
public final class DefaultLockClient extends LeaseOwner implements LockClient {

    private static final Logger LOG = Loggers.getLogger(DefaultLockClient.class);
    private static final AtomicLong IDS = new AtomicLong();
    private static final Duration CLOSE_GRACE = Duration.ofMillis(500);

    static {
        // seed the owner-id generator now (it reads the entropy device once), not on the event
        // loop that runs the first acquire
        GrantRequest.newOwner();
    }

    private final long id = IDS.incrementAndGet();
    private final SafeListener listener;
    private final LockBackend backend;
    private final StoreOutage outage;
    private final LockOptions defaults;
    private final Scheduler ownScheduler;
    private final NotificationHub hub;
    private final StateObserver observer;
    private final Registry<LeaseHandle> leases = new Registry<>();
    /** Store clean-ups under way (releases, and requests of ended acquires still in flight): close() waits for them. */
    private final CleanUpBook cleanUps = new CleanUpBook();
    private final ClientMetrics metrics = new ClientMetrics(leases, operations);
    /** Request timeouts, lease deadlines and renewal batches, per scheduler (see {@link EngineTimers}). */
    private final EngineTimers timers;
    private volatile boolean closed;
    private final Mono<Void> close;

    /**
     * @param backend  the store adapter
     * @param defaults options for the methods that take none
     * @param listener told about acquisitions, renewals, releases and losses
     */
    public DefaultLockClient(LockBackend backend, LockOptions defaults, LockListener listener) {
        this.backend = Objects.requireNonNull(backend, "backend");
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        this.listener = new SafeListener(Objects.requireNonNull(listener, "listener"));
        this.ownScheduler = OwnSchedulers.create("reactive-locks-" + backend.name() + "-" + id);
        this.hub = new NotificationHub(backend, schedulerFor(defaults));
        this.observer = new StateObserver(this);
        this.timers = new EngineTimers(ownScheduler, defaults.clock(), backend::renew, backend.name());
        this.close = Mono.defer(this::doClose).cache();
        this.outage = new StoreOutage(backend.name(), "lock client " + id);
    }

    // ---- API

    @Override
    public LockOptions options() {
        return defaults;
    }

    @Override
    public Mono<Lease> acquire(String name, LockOptions options) {
        return AcquireOperation.leaseMono(this, LockNames.check(name), checkLeaseTime(options), true);
    }

    @Override
    public Mono<Lease> tryAcquire(String name, LockOptions options) {
        return AcquireOperation.leaseMono(this, LockNames.check(name), checkLeaseTime(options), false);
    }

    @Override
    public Flux<Lease> hold(String name, LockOptions options) {
        LockNames.check(name);
        checkLeaseTime(options);
        return HoldAgain.hold(name, options, o -> acquireHandle(name, o, true), LeaseHandle::updates, LeaseHandle::release);
    }

    @Override
    public <T> Mono<T> withLock(String name, LockOptions options, Function<? super Lease, ? extends Mono<T>> body) {
        LockNames.check(name);
        checkLeaseTime(options);
        Objects.requireNonNull(body, "body");
        // one operator: reentrancy, acquire, the body under the lease, release, error mapping (see WithLock)
        return WithLock.create(this, name, options, body);
    }

    @Override
    public <T> Flux<T> withLockMany(String name, LockOptions options, Function<? super Lease, ? extends Publisher<T>> body) {
        LockNames.check(name);
        checkLeaseTime(options);
        Objects.requireNonNull(body, "body");
        return Flux.deferContextual(ctx -> {
            HeldLocks held = HeldLocks.of(ctx);
            LeaseHandle reentered = held.get(this, name);
            if (reentered != null) {
                return runUnder(reentered, Flux.defer(() -> body.apply(reentered.snapshot())));
            }
            return Flux.usingWhen(acquireHandle(name, options, true),
                    h -> runUnder(h, Flux.defer(() -> body.apply(h.snapshot())))
                            .contextWrite(c -> c.put(HeldLocks.KEY, held.with(this, h))),
                    LeaseHandle::releaseAfterWork, (h, e) -> h.releaseAfterWork(), LeaseHandle::release);
        });
    }

    @Override
    public Flux<LockState> observe(String name) {
        LockNames.check(name);
        // subscribed after close: an error, not an empty stream a caller could take for "no news"
        return Flux.defer(() -> closed ? Flux.error(new LockClientClosedException(name)) : observer.observe(name));
    }

    @Override
    public Mono<LockState> inspect(String name) {
        LockNames.check(name);
        return Mono.defer(() -> closed ? Mono.error(new LockClientClosedException(name)) : observer.inspect(name));
    }

    @Override
    public Mono<Void> awaitRelease(String name) {
        // the state stream only ends without a Free state when the client closes: never report that as free
        return observe(name).filter(s -> !s.isHeld()).next()
                .switchIfEmpty(Mono.error(() -> new LockClientClosedException(name)))
                .then();
    }

    @Override
    public Mono<Void> close() {
        return close;
    }

    /**
     * A store that renews by session (etcd, ZooKeeper) gives every lease the session's TTL, which
     * was fixed from this client's default options: a per-call lease time that differs would be
     * silently ignored, so it is refused.
     */
    private LockOptions checkLeaseTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        if (backend.renewalMode() == RenewalMode.SESSION && !options.leaseTime().equals(defaults.leaseTime())) {
            throw new IllegalArgumentException("leaseTime " + options.leaseTime() + " differs from the client's "
                    + defaults.leaseTime() + ": the " + backend.name() + " store gives every lease of a client its"
                    + " session's TTL; use a client created with that lease time");
        }
        return options;
    }

    // ---- engine

    /*
     * The body runs until it ends or the lease is lost (then it is cancelled). A body that ends
     * after the lease's deadline passed — before the deadline timer could fire, say after a
     * long pause — did not finish under the lock either: it fails with LockLostException too.
     * (withLock does the same inside its one operator, WithLock.)
     */
    private static <T> Flux<T> runUnder(LeaseHandle h, Flux<T> body) {
        return body.takeUntilOther(h.lost())
                .concatWith(Mono.defer(() -> h.confirmValid() ? Mono.empty() : Mono.error(lostError(h))));
    }

    private static LockLostException lostError(LeaseHandle h) {
        return new LockLostException(h.name(), h.lock.token(), String.valueOf(h.lossReason()));
    }

    Mono<LeaseHandle> acquireHandle(String name, LockOptions options, boolean wait) {
        return AcquireOperation.mono(this, name, options, wait);
    }

    @Override
    boolean isClosed() {
        return closed;
    }

    @Override
    LeaseHandle newLease(String name, String owner, long token, LockOptions options, Scheduler scheduler, long validUntil,
                         SafeListener leaseListener) {
        var renewals = timers.renewals(scheduler, options.clock());
        LeaseHandle h = new LeaseHandle(this, new HeldLock(name, owner, token), options, scheduler, renewals, validUntil,
                leaseListener);
        h.payload = options.payload();
        leases.add(h);
        if (closed) {
            h.release().subscribe(null, e -> { }); // tracked: close() waits for it
        }
        return h;
    }

    @Override
    Scheduler schedulerFor(LockOptions options) {
        return options.scheduler() != null ? options.scheduler() : ownScheduler;
    }

    @Override
    SafeListener acquireListener(String name, reactor.util.context.ContextView context) {
        return listener.forAcquire(name, context);
    }

    @Override
    reactor.core.Disposable wakes(String name, boolean wakesAll, @Nullable Object mark, AcquireOperation op) {
        reactor.core.Disposable d = hub.wakes(name)
                .subscribe(op::onEvent, e -> op.notificationsLive(false), () -> op.notificationsLive(false));
        if (hub.live(name)) {
            // joined a channel that is live already: no Subscribed comes for this subscriber, and every later release
            // reaches it. It re-checks now (a release between its request and its subscription would be missed
            // otherwise) — unless the channel was live when the request was sent and notified no release since
            op.notificationsLive(true);
            if (!hub.unchangedSince(name, mark)) {
                op.wakeUp();
            }
        }
        return d;
    }

    @Override
    @Nullable Object releaseMark(String name) {
        return hub.releaseMark(name);
    }

    @Override
    io.reactivelocks.LockException acquireError(String name, Throwable error) {
        return BackendErrors.map(backend.name(), name, "acquire", error);
    }

    @Override
    Mono<io.reactivelocks.spi.Attempt> tryGrant(GrantRequest request) {
        return backend.tryGrant(request);
    }

    LockBackend backend() {
        return backend;
    }

    /** Store clean-ups under way, which close() waits for. */
    Registry<CleanUp> cleanUps() {
        return cleanUps.registry();
    }

    SafeListener listener() {
        return listener;
    }

    NotificationHub hub() {
        return hub;
    }

    long id() {
        return id;
    }

    /** @return the log of this client's store outages */
    StoreOutage outage() {
        return outage;
    }

    LockClock clock() {
        return defaults.clock();
    }

    Scheduler defaultScheduler() {
        return schedulerFor(defaults);
    }

    void forget(LeaseHandle h) {
        leases.remove(h);
    }

    /**
     * @return the request timeouts of requests timed on {@code scheduler} with {@code clock}
     *     (a clock other than the one the scheduler was first used with gets its own structure)
     */
    @Override
    RequestDeadlines deadlines(Scheduler scheduler, LockClock clock) {
        return timers.deadlines(scheduler, clock);
    }

    /**
     * @return the deadlines of leases timed on {@code scheduler} with {@code clock} (a clock other
     *     than the one the scheduler was first used with gets its own heap)
     */
    @Override
    DeadlineHeap leaseDeadlines(Scheduler scheduler, LockClock clock) {
        return timers.leaseDeadlines(scheduler, clock);
    }

    @Override
    io.reactivelocks.spi.RenewalMode renewalMode() {
        return backend.renewalMode();
    }

    @Override
    Flux<io.reactivelocks.spi.Renewal> sessionRenewals(HeldLock lock, LockClock clock) {
        return backend.sessionRenewals(lock, clock);
    }

    @Override
    Flux<io.reactivelocks.spi.LockEvent> events(String name) {
        return hub.wakeUpEvents(name); // a revocation needs no grants
    }

    /** @return {@code source} bounded by the request timeout of {@code options} */
    <T> Mono<T> withinRequestTimeout(Mono<T> source, LockOptions options) {
        return deadlines(schedulerFor(options), options.clock()).within(source, options.requestTimeout());
    }

    /** Owner- and token-checked payload update on the server, bounded by the request timeout. */
    Mono<Boolean> updatePayloadOnServer(HeldLock lock, String payload, LockOptions options) {
        return withinRequestTimeout(Mono.defer(() -> backend.updatePayload(lock, payload)), options)
                .onErrorMap(e -> !(e instanceof io.reactivelocks.LockException),
                        e -> BackendErrors.map(backend.name(), lock.name(), "payload update", e))
                .defaultIfEmpty(Boolean.FALSE);
    }

    /** Owner-checked release on the server, bounded by the request timeout. */
    Mono<Void> releaseOnServer(String name, String owner, LockOptions options) {
        // not ServerRelease: under releaseDetached's tracked(..).onErrorResume(..).cache() it left keys on the
        // store in RedisQuorumContractTest.closeRightAfterCancelLeavesNothingOnTheStore; this path is off the hot
        // one (losses, late grants, give-backs). A give-back not answered within the request timeout was
        // forgotten by close(), which then closed the store under it (the likely cause of keys left there and of
        // PostgreSQL read-write grants left in loaded runs): give-backs go through giveBackOnServer
        return withinRequestTimeout(Mono.defer(() -> backend.release(name, owner)), options)
                .onErrorMap(e -> BackendErrors.map(backend.name(), name, "release", e))
                .then();
    }

    /**
     * A give-back (nobody waits for it but {@link #close()}): bounded by the lease time — the grant
     * expires by then anyway — not by the request timeout, so that close(), which waits for it up to
     * its own bound, does not forget a release a loaded store was still working on and close the
     * store under it.
     */
    Mono<Void> giveBackOnServer(String name, String owner, LockOptions options) {
        return deadlines(schedulerFor(options), options.clock()).within(Mono.defer(() -> backend.release(name, owner)), options.leaseTime())
                .onErrorMap(e -> BackendErrors.map(backend.name(), name, "release", e))
                .then();
    }

    /**
     * {@link #releaseOnServer} that {@link #close()} waits for ({@link #tracked}), registered on
     * subscription: what {@code tracked(name, releaseOnServer(..))} did with five operators less.
     */
    Mono<Void> trackedReleaseOnServer(String name, String owner, LockOptions options) {
        return new ServerRelease(this, name, owner, options);
    }

    /**
     * Release of whatever {@code owner} may have on the server, nobody waiting for it — except
     * {@link #close()}, which lets such releases finish before it closes the backend.
     *
     * @return the release, already subscribed (cached: subscribing again does not send it again)
     */
    Mono<Void> releaseDetached(String name, String owner, LockOptions options) {
        return releaseDetached(name, owner, options, true);
    }

    /**
     * @param granted whether the store granted the lock to {@code owner} (a lost or expired lease); an acquire's
     *                clean-up of a key its request may have left is not worth a WARN line when it fails (the store
     *                is down: the outage is logged once, see {@link StoreOutage})
     */
    @Override
    Mono<Void> releaseDetached(String name, String owner, LockOptions options, boolean granted) {
        int epoch = outage.epoch();
        Mono<Void> release = tracked(name, giveBackOnServer(name, owner, options)
                .onErrorResume(e -> {
                    outage.failed(e, epoch);
                    if (granted) {
                        LOG.warn("could not release lock '{}' on the store (it stays until its lease or session ends): {}",
                                name, e.toString());
                    } else {
                        LOG.debug("could not give back what an ended acquire of lock '{}' may have left (it expires by itself): {}",
                                name, e.toString());
                    }
                    return Mono.empty();
                }))
                .cache();
        release.subscribe();
        return release;
    }

    /**
     * Registers store work on lock {@code name} that {@link #close()} must wait for before it
     * closes the backend; it is forgotten when the work ends or is cancelled, before its end
     * reaches anyone, so close() never waits for an ended clean-up.
     *
     * @return {@code work}, to be subscribed once
     */
    Mono<Void> tracked(String name, Mono<Void> work) {
        CleanUp c = new CleanUp(name, cleanUps.registry());
        cleanUps.registry().add(c);
        return work.doFinally(c);
    }

    /**
     * Registers the clean-up of an acquire that ended while its request was still in flight:
     * {@link #close()} waits until the returned runnable is run (the request settled and, if it
     * may have taken the lock, its release was answered).
     */
    @Override
    Runnable pendingCleanUp(String name) {
        return cleanUps.pending(name);
    }

    private Mono<Void> doClose() {
        closed = true;
        for (AcquireOperation op : operations.snapshot()) {
            op.closed();
        }
        hub.close(); // before the observers leave: a subscription that ends is not left lingering
        observer.close();
        for (LeaseHandle h : leases.snapshot()) {
            h.release().subscribe(null, e -> { }); // tracked: drain() waits for it
        }
        // every in-flight request of an ended acquire settles within its request timeout, and its
        // release within another; past that, name what is left and close anyway
        Duration bound = defaults.requestTimeout().multipliedBy(2).plus(CLOSE_GRACE);
        return drain()
                .timeout(Mono.delay(bound, ownScheduler), Mono.fromRunnable(() -> LOG.warn(
                        "lock client closed before the store confirmed the release of {} (they stay until their lease or session ends)",
                        cleanUps.names().stream().map(n -> "'" + n + "'").toList())))
                .then(Mono.fromRunnable(() -> {
                    timers.close();
                }))
                .then(Mono.defer(backend::close))
                .as(close -> OwnSchedulers.closeThenDispose(close, ownScheduler));
    }

    @Override
    public LockClientMetrics metrics() {
        return metrics;
    }

    /** Counts a release after a scoped body that the store did not confirm. */
    void releaseUnconfirmed() {
        metrics.releaseUnconfirmed();
    }

    /**
     * Completes once no clean-up is under way and no acquire is still handing over a grant; a
     * clean-up may start another (a late grant's release), so it looks again after each round.
     */
    private Mono<Void> drain() {
        return drain(CleanUpBook.newSeen());
    }

    /** @param seen the clean-ups waited for already ({@link CleanUpBook#unseen}: each once, no busy loop) */
    private Mono<Void> drain(java.util.Set<CleanUp> seen) {
        return Mono.defer(() -> {
            List<Mono<Void>> pending = cleanUps.unseen(seen);
            if (pending.isEmpty()) {
                return operations.isEmpty() ? Mono.<Void>empty()
                        : Mono.delay(Duration.ofMillis(1), ownScheduler).then(drain(seen));
            }
            return Mono.when(pending).then(drain(seen));
        });
    }

    @Override
    public String toString() {
        return "LockClient{" + backend.name() + ", id " + id + "}";
    }
}
