package io.reactivelocks.internal;

import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.GrantRequest;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * One acquire of any concept — a lock, a fair lock, semaphore permits, a read or write grant: a small
 * state machine driven by store answers, timers and release notifications. The engine's one acquire
 * loop: every rule of waiting, request deadlines, late and expired grants, the outage log, cancel and
 * close exists here once. A lock asks its {@link io.reactivelocks.spi.LockBackend} with a
 * {@link GrantRequest}; a grant store is asked through the concept's {@link GrantEngine.GrantCall}
 * for several owners at once (permits), and may leave something of a refused request (a waiting
 * writer's intent), which the end of the acquire then gives back.
 *
 * <ul>
 *   <li>one attempt = one {@code tryGrant} call; its subscription is never cancelled by the
 *       caller, so a grant that arrives after a cancel is seen — and released;</li>
 *   <li>on {@code Busy} it subscribes to the lock's events (once); when that subscription goes
 *       live it re-checks at once (a release between the answer and the subscription is not
 *       missed), then waits for the first of a release event, the holder's TTL and the next
 *       jittered backoff step — once its events are live and it re-checked, the holder's TTL or a
 *       safety net (the backoff's cap or a third of the lease time) instead of the backoff step;</li>
 *   <li>on {@code Queued} it waits on the store's turn (predecessor only);</li>
 *   <li>cancel, wait timeout, close and failure all end in {@link #finish}: timers and
 *       subscriptions are disposed, and if the store may hold a key of this owner, an
 *       owner-checked release is sent — after the in-flight request settled.</li>
 * </ul>
 *
 * <p>It is its subscriber's {@link Subscription} (see {@link #mono}) rather than a
 * {@code Mono.create} sink: a sink that loses the race between {@code success} and
 * {@code cancel} drops the value as "next dropped", which would leak a granted lease. Here a
 * grant is either handed to the subscriber or, if the cancel came first, released.
 */
final class AcquireOperation extends Registry.Member implements Subscription {

    private static final reactor.util.Logger LOG = reactor.util.Loggers.getLogger(AcquireOperation.class);

    private static final long ONE_MS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final Mono<Attempt> NO_QUEUE_ANSWER =
            Mono.error(() -> new IllegalStateException("store ended the queue wait without an answer"));

    /** An unknown expiry of what stands in the way (a busy answer without one). */
    private static final long UNKNOWN = Long.MIN_VALUE;

    private final LeaseOwner site;
    private final String name;
    /** The owner id of a lock acquire, or of the first grant of a grant acquire. */
    private final String owner;
    /** The owner ids of a grant acquire (one per grant), fixed before the first request; null for a lock. */
    private final @Nullable List<String> owners;
    /** How one attempt of a grant acquire asks its store; null for a lock. */
    private final GrantEngine.@Nullable GrantCall call;
    /** Whether a refused request may leave something of its owners on the store (a waiting writer's intent). */
    private final boolean refusalLeaves;
    /** Whether a release wakes every local waiter of the name while this one waits (a waiting reader). */
    private final boolean wakesAll;
    private final LockOptions options;
    private final boolean wait;
    private final Scheduler scheduler;
    private final CoreSubscriber<Object> actual;
    /** Whether the subscriber gets the lease's {@link LeaseSnapshot} (acquire, tryAcquire) or the handle itself. */
    private final boolean deliverSnapshot;
    private final long startedAt;
    /** Gets this acquire's events and, through the lease, its lease's. */
    private final SafeListener listener;

    // guarded by this
    private boolean done;
    private boolean inFlight;
    private boolean mayHoldKey;
    private boolean waiting;
    private boolean eventsRequested;
    /** The name's {@link LeaseOwner#releaseMark} before the last request was sent, until this acquire subscribed. */
    private @Nullable Object releaseMark;
    /**
     * Whether this acquire's release notifications are live: the store confirmed its subscription and this
     * acquire re-checked after that, so every later release wakes it (guarded by this).
     */
    private boolean notificationsLive;
    private boolean wakePending;
    private boolean turnWaiting;
    private long attempts;
    private int expiredGrants;
    private long firstSentAt = Long.MIN_VALUE;
    private LockException lastError;
    private Disposable waitTimer;
    private Disposable timeoutTimer;
    private Disposable events;
    private Disposable turn;
    private Disposable turnWake;      // a queueing grant store's wake-up of this acquire's turn
    private boolean requested;
    private boolean cancelled;
    private Object granted;           // granted, not yet handed over: a lease, or a list of them
    private Runnable settling; // ended with a request in flight: close() waits for it to settle

    /**
     * @return a {@code Mono} that runs one acquire per subscription
     */
    static Mono<LeaseHandle> mono(DefaultLockClient client, String name, LockOptions options, boolean wait) {
        return new Mono<>() {
            @Override
            @SuppressWarnings("unchecked")
            public void subscribe(CoreSubscriber<? super LeaseHandle> actual) {
                run(client, name, options, wait, (CoreSubscriber<Object>) actual, false);
            }
        };
    }

    /**
     * @return a {@code Mono} that runs one acquire per subscription and emits the lease's
     *     {@link LeaseSnapshot} (no {@code map} operator between: one object less per acquire)
     */
    static Mono<io.reactivelocks.Lease> leaseMono(DefaultLockClient client, String name, LockOptions options, boolean wait) {
        return new Mono<>() {
            @Override
            @SuppressWarnings("unchecked")
            public void subscribe(CoreSubscriber<? super io.reactivelocks.Lease> actual) {
                run(client, name, options, wait, (CoreSubscriber<Object>) actual, true);
            }
        };
    }

    /** Runs one acquire for {@code actual} (what {@link #mono} does on subscribe; {@code WithLock} calls it directly). */
    static void run(DefaultLockClient client, String name, LockOptions options, boolean wait,
                            CoreSubscriber<Object> actual, boolean deliverSnapshot) {
        AcquireOperation op = new AcquireOperation(client, name, null, null, false, false, options, wait, actual,
                deliverSnapshot);
        actual.onSubscribe(op);
        client.register(op);
    }

    /**
     * @return a {@code Mono} that runs one acquire of {@code count} grants per subscription (all or none)
     * @see GrantEngine#acquire
     */
    static Mono<List<LeaseHandle>> grants(GrantEngine engine, String name, int count, GrantEngine.GrantCall call,
            LockOptions options, boolean wait, boolean refusalLeaves, boolean wakesAll) {
        return new Mono<>() {
            @Override
            @SuppressWarnings("unchecked")
            public void subscribe(CoreSubscriber<? super List<LeaseHandle>> actual) {
                List<String> ids = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    ids.add(GrantRequest.newOwner());
                }
                AcquireOperation op = new AcquireOperation(engine, name, List.copyOf(ids), call, refusalLeaves, wakesAll,
                        options, wait, (CoreSubscriber<Object>) actual, false);
                actual.onSubscribe(op);
                engine.register(op);
            }
        };
    }

    private AcquireOperation(LeaseOwner site, String name, @Nullable List<String> owners,
                             GrantEngine.@Nullable GrantCall call, boolean refusalLeaves, boolean wakesAll,
                             LockOptions options, boolean wait, CoreSubscriber<Object> actual, boolean deliverSnapshot) {
        this.site = site;
        this.deliverSnapshot = deliverSnapshot;
        this.name = name;
        this.owners = owners;
        this.owner = owners == null ? GrantRequest.newOwner() : owners.get(0);
        this.call = call;
        this.refusalLeaves = refusalLeaves;
        this.wakesAll = wakesAll;
        this.options = options;
        this.wait = wait;
        this.scheduler = site.schedulerFor(options);
        this.actual = actual;
        this.startedAt = options.clock().nanoTime();
        this.listener = site.acquireListener(name, actual.currentContext());
    }

    /** @return the lock this acquire is for */
    String name() {
        return name;
    }

    private Duration waited() {
        return Duration.ofNanos(Math.max(0, options.clock().nanoTime() - startedAt));
    }

    // ---- Subscription

    @Override
    public void request(long n) {
        if (!Operators.validate(n)) {
            return;
        }
        Object deliver;
        synchronized (this) {
            requested = true;
            deliver = granted;
            granted = null;
        }
        if (deliver != null) {
            actual.onNext(deliverSnapshot ? ((LeaseHandle) deliver).snapshot() : deliver);
            actual.onComplete();
        }
    }

    @Override
    public void cancel() {
        Object undelivered;
        synchronized (this) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            undelivered = granted;
            granted = null;
        }
        if (undelivered != null) {
            // granted but not handed over yet: ours to give back
            release(undelivered);
            return;
        }
        if (finish(null, false)) {
            listener.onAcquireCancelled(name, waited());
        }
    }

    /** @param value the lease, or the list of leases of a grant acquire */
    private void emitGranted(Object value) {
        boolean deliver;
        boolean giveBack;
        synchronized (this) {
            giveBack = cancelled;
            deliver = !cancelled && requested;
            if (!deliver && !cancelled) {
                granted = value; // handed over on request
            }
        }
        if (giveBack) {
            release(value);
        } else if (deliver) {
            actual.onNext(deliverSnapshot ? ((LeaseHandle) value).snapshot() : value);
            actual.onComplete();
        }
    }

    /** Gives back granted leases that were not handed over. */
    @SuppressWarnings("unchecked")
    private static void release(Object value) {
        if (value instanceof LeaseHandle h) {
            h.release().subscribe(null, e -> { });
        } else {
            for (LeaseHandle h : (List<LeaseHandle>) value) {
                h.release().subscribe(null, e -> { });
            }
        }
    }

    /**
     * @param granted whether the store granted to these owners (a grant given back), else a clean-up of what
     *                a request may have left
     * @return the owner-checked release of everything this acquire's owners may have on the store, already
     *         sent; completes when the store answered (errors are logged, not signalled)
     */
    private Mono<Void> giveBack(boolean granted) {
        if (owners == null || owners.size() == 1) {
            return site.releaseDetached(name, owner, options, granted);
        }
        List<Mono<Void>> all = new ArrayList<>(owners.size());
        for (String o : owners) {
            all.add(site.releaseDetached(name, o, options, granted));
        }
        return Mono.when(all);
    }

    private void emitEmpty() {
        boolean signal;
        synchronized (this) {
            signal = !cancelled;
        }
        if (signal) {
            actual.onComplete();
        }
    }

    private void emitError(Throwable e) {
        boolean signal;
        synchronized (this) {
            signal = !cancelled;
        }
        if (signal) {
            actual.onError(e);
        }
    }

    void start() {
        if (isDone()) { // cancelled from within onSubscribe
            site.operationEnded(this);
            return;
        }
        // the wait timeout counts from startedAt (the operation's creation); the wait timer is armed when the operation first has to wait (busy, queued, failed, given back):
        // an acquire granted at once (the common case) arms none. One that could time out while its
        // first request is still in flight arms it now.
        if (wait && options.waitTimeout() != null && options.waitTimeout().compareTo(options.requestTimeout()) <= 0
                && !armWaitTimeout()) {
            return;
        }
        attempt();
    }

    /**
     * Arms the wait timeout, once, for what is left of it since {@link #startedAt}; fails the
     * operation at once when nothing is left.
     *
     * @return false when the operation ended (the wait was spent, or the scheduler refused the timer)
     */
    private boolean armWaitTimeout() {
        if (!wait || options.waitTimeout() == null) {
            return true;
        }
        synchronized (this) {
            if (done) {
                return false;
            }
            if (timeoutTimer != null) {
                return true;
            }
        }
        long left = options.waitTimeout().toNanos() - (options.clock().nanoTime() - startedAt);
        if (left <= 0) {
            onWaitTimeout();
            return false;
        }
        Disposable t = schedule(this::onWaitTimeout, left);
        if (t == null) {
            return false;
        }
        synchronized (this) {
            if (done || timeoutTimer != null) {
                t.dispose();
                return !done;
            }
            timeoutTimer = t;
        }
        return true;
    }

    // ---- attempts

    private void attempt() {
        boolean again;
        synchronized (this) {
            again = attempts > 0;
        }
        if (again && !armWaitTimeout()) {
            return;
        }
        GrantRequest request = null;
        synchronized (this) {
            if (done || inFlight) {
                return;
            }
            waiting = false;
            disposeWaitTimer();
            disposeTurnWake();
            attempts++;
            inFlight = true;
            mayHoldKey = true; // the request may create a key of ours, whatever we hear back
            if (call == null) {
                request = new GrantRequest(name, owner, options.leaseTime(), wait, options.clock(), options.payload());
            }
        }
        long sentAt = options.clock().nanoTime();
        boolean mark;
        synchronized (this) {
            if (firstSentAt == Long.MIN_VALUE) {
                firstSentAt = sentAt;
            }
            mark = wait && !eventsRequested;
        }
        if (mark) {
            Object m = site.releaseMark(name);
            synchronized (this) {
                releaseMark = m;
            }
        }
        Mono<?> ask;
        try {
            ask = call == null ? site.tryGrant(request) : call.tryGrant(owners, options.leaseTime());
        } catch (RuntimeException e) {
            ask = Mono.error(e);
        }
        site.deadlines(scheduler, options.clock())
                .subscribe(ask, options.requestTimeout(), new AttemptAnswer(sentAt, site.outage().epoch()));
    }

    /**
     * The answer to one attempt: one object instead of {@code switchIfEmpty}, a lambda subscriber
     * and its two lambdas. Requests everything at once; an empty answer breaks the store's contract.
     */
    private final class AttemptAnswer implements CoreSubscriber<Object> {
        private final long sentAt;
        /** The store outage's epoch when sent ({@link StoreOutage#failed(Throwable, int)}). */
        private final int epoch;
        private boolean answered;

        AttemptAnswer(long sentAt, int epoch) {
            this.sentAt = sentAt;
            this.epoch = epoch;
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Object a) {
            if (answered) {
                return;
            }
            answered = true;
            site.outage().answered();
            try {
                onAnswer(a, sentAt);
            } catch (RuntimeException e) {
                onAttemptError(e, epoch);
            }
        }

        @Override
        public void onError(Throwable e) {
            if (answered) {
                Operators.onErrorDropped(e, reactor.util.context.Context.empty());
                return;
            }
            answered = true;
            onAttemptError(e, epoch);
        }

        @Override
        public void onComplete() {
            if (!answered) {
                answered = true;
                onAttemptError(new IllegalStateException("store answered nothing"), epoch);
            }
        }
    }

    /** @param answer a lock store's {@link Attempt} or a grant store's {@link PermitGrant} */
    private void onAnswer(Object answer, long sentAt) {
        if (answer instanceof Attempt.Granted g) {
            onGranted(null, g.token(), g.ttl(), g.validFromNanos() == Attempt.SENT_TIME ? sentAt : g.validFromNanos());
        } else if (answer instanceof Attempt.Busy b) {
            Holder h = b.holder();
            onBusy(h == null || h.remaining() == null ? UNKNOWN : h.remaining().toNanos());
        } else if (answer instanceof Attempt.Queued q) {
            onQueued(q);
        } else if (answer instanceof PermitGrant.Granted g) {
            if (owners == null || g.tokens().size() != owners.size()) {
                throw new IllegalStateException("the store granted " + g.tokens().size() + " tokens to "
                        + (owners == null ? 1 : owners.size()) + " owners");
            }
            onGranted(g.tokens(), 0, g.ttl(), sentAt);
        } else if (answer instanceof PermitGrant.Busy b) {
            onBusy(b.earliestExpiry() == null ? UNKNOWN : b.earliestExpiry().toNanos());
        } else {
            throw new IllegalStateException("the store answered " + answer);
        }
    }

    /**
     * @param tokens    the tokens of a grant acquire's owners, in order; null for a lock ({@code token})
     * @param token     a lock's token
     * @param ttl       the TTL granted
     * @param validFrom when the grant's validity starts (its request's send time, or the store's)
     */
    private void onGranted(@Nullable List<Long> tokens, long token, Duration ttl, long validFrom) {
        synchronized (this) {
            if (turnWaiting && done) {
                return; // the turn was disposed and its entry released by finish()
            }
            turnWaiting = false;
        }
        long validUntil = validFrom + options.validityNanos(ttl);
        if (validUntil - options.clock().nanoTime() <= 0) {
            onExpiredGrant(ttl);
            return;
        }
        boolean late;
        synchronized (this) {
            inFlight = false;
            turn = null;
            if (done) {
                late = true;
            } else {
                late = false;
                done = true;
                mayHoldKey = false;
                disposeAll();
            }
        }
        if (late) {
            settleLate(true);
            return;
        }
        if (tokens == null) {
            LeaseHandle lease = site.newLease(name, owner, token, options, scheduler, validUntil, listener);
            site.operationEnded(this);
            if (listener.active()) {
                listener.onAcquired(name, token, waited());
            }
            lease.start(validFrom);
            emitGranted(lease);
            return;
        }
        List<LeaseHandle> leases = new ArrayList<>(tokens.size());
        for (int i = 0; i < tokens.size(); i++) {
            leases.add(site.newLease(name, owners.get(i), tokens.get(i), options, scheduler, validUntil, listener));
        }
        site.operationEnded(this);
        if (listener.active()) {
            Duration waited = waited();
            for (long t : tokens) {
                listener.onAcquired(name, t, waited);
            }
        }
        for (LeaseHandle h : leases) {
            h.start(validFrom);
        }
        emitGranted(leases);
    }

    /**
     * A grant whose answer came after its own validity had passed (a paused JVM, a slow store): it
     * is given back, and once the store confirmed that (so the release cannot undo a later grant to
     * the same owner) the acquire asks again — while its wait budget lasts (the wait-timeout timer
     * keeps running); a {@code tryAcquire} asks once more, then answers as for a busy lock.
     */
    private void onExpiredGrant(Duration ttl) {
        boolean late;
        boolean again;
        synchronized (this) {
            turn = null;
            late = done;
            expiredGrants++;
            again = wait || expiredGrants == 1;
            if (late) {
                inFlight = false;
            }
            // else the give-back counts as the request in flight: finish() meanwhile leaves the
            // release to it and close() waits for it
        }
        if (late) {
            settleLate(true);
            return;
        }
        LOG.debug("grant of '{}' arrived after its validity ({}) had passed; given back{}", name, ttl,
                again ? ", asking again" : "");
        giveBack(true).subscribe(null, e -> { }, () -> afterGiveBack(again));
    }

    private void afterGiveBack(boolean again) {
        boolean ended;
        synchronized (this) {
            inFlight = false;
            mayHoldKey = false;
            firstSentAt = Long.MIN_VALUE; // a queue place given back: the next one counts from its own request
            ended = done;
            if (!ended && !again) {
                done = true;
                disposeAll();
            }
        }
        if (ended) {
            settleLate(false);
        } else if (again) {
            attempt();
        } else {
            site.operationEnded(this);
            listener.onContended(name);
            emitEmpty();
        }
    }

    /**
     * @param remainingNanos how long what stands in the way has left at most (the holder's TTL, the
     *                       earliest expiry of the grants in the way), {@link #UNKNOWN} when the store did not say
     */
    private void onBusy(long remainingNanos) {
        boolean subscribe;
        boolean now;
        long attemptsBefore;
        Object mark;
        boolean late;
        synchronized (this) {
            inFlight = false;
            turnWaiting = false;
            mayHoldKey = refusalLeaves; // a definite no holds nothing, but may have left an intent
            late = done;
            if (!late && !wait) {
                done = true;
                disposeAll();
            }
        }
        if (late) {
            settleLate(refusalLeaves);
            return;
        }
        if (!wait) {
            if (refusalLeaves) {
                giveBack(false);
            }
            site.operationEnded(this);
            listener.onContended(name);
            emitEmpty();
            return;
        }
        if (attempts >= options.backoff().maxAttempts) {
            fail(new LockTimeoutException(name, options.waitTimeout(), attempts), "attempts exhausted");
            return;
        }
        if (!armWaitTimeout()) {
            return;
        }
        boolean byTurn = call != null && site.queuesGrants();
        long delay = waitNanos(byTurn, remainingNanos);
        synchronized (this) {
            if (done) {
                return;
            }
            waiting = true;
            now = wakePending;
            wakePending = false;
            subscribe = !byTurn && !eventsRequested;
            eventsRequested |= subscribe;
            attemptsBefore = attempts;
            mark = releaseMark;
            releaseMark = null;
        }
        if (byTurn) {
            Disposable d = site.awaitTurn(name, owners).subscribe(null, e -> { /* the safety timer wakes us */ }, this::onWake);
            synchronized (this) {
                if (!done && waiting) {
                    turnWake = d;
                    d = null;
                }
            }
            if (d != null) {
                d.dispose(); // woken already, or ended meanwhile
            }
        }
        if (subscribe) {
            Disposable d = site.wakes(name, wakesAll, mark, this);
            boolean superseded;
            synchronized (this) {
                if (!done) {
                    events = d;
                    d = null;
                }
                // joining a live subscription re-checks at once (from within wakes): that attempt set its own wait
                // (or its request is in flight), which the delay computed above must not replace
                superseded = attempts != attemptsBefore;
            }
            if (d != null) {
                d.dispose();
                return;
            }
            if (superseded) {
                return;
            }
            delay = waitNanos(false, remainingNanos); // it may have joined a live subscription without a re-check
        }
        if (now) {
            onWake();
            return;
        }
        Disposable t = schedule(this::onWake, delay);
        if (t == null) {
            return;
        }
        synchronized (this) {
            if (done || !waiting) {
                t.dispose();
                return;
            }
            disposeWaitTimer();
            waitTimer = t;
        }
    }

    private void onQueued(Attempt.Queued q) {
        boolean abandoned;
        synchronized (this) {
            // the entry exists (mayHoldKey stays true): finish() releases it. The turn counts as the
            // request in flight from before it is subscribed: it may answer (even fail) during subscribe
            abandoned = done;
            inFlight = !abandoned;
            turnWaiting = !abandoned;
        }
        if (abandoned) {
            settleLate(true);
            return;
        }
        armWaitTimeout(); // ends the operation when the wait is spent: finish() then releases the entry
        int epoch = site.outage().epoch();
        Disposable d = q.turn()
                .switchIfEmpty(NO_QUEUE_ANSWER)
                .subscribe(a -> onAnswer(a, firstSentAt()), e -> onAttemptError(e, epoch));
        synchronized (this) {
            if (!done && turnWaiting) {
                turn = d; // still waiting for its answer
                return;
            }
        }
        d.dispose(); // answered already, or finish() ran meanwhile and released the entry
    }

    /** @param epoch the store outage's epoch when the request was sent */
    private void onAttemptError(Throwable error, int epoch) {
        LockException e = site.acquireError(name, error);
        site.outage().failed(e, epoch);
        boolean late;
        synchronized (this) {
            if (turnWaiting && done) {
                return; // released by finish()
            }
            turnWaiting = false;
            inFlight = false;
            turn = null;
            late = done;
            if (!late) {
                lastError = e;
            }
        }
        if (late) {
            settleLate(true);
            return;
        }
        if (wait && BackendErrors.isTransient(e)) {
            if (!armWaitTimeout()) {
                return;
            }
            // a request that timed out may have been granted: ask again at once (same owners: a grant
            // comes back as such), its own timeout already spaced the requests. A fast failure (a lost or
            // refused connection) waits the backoff step, but never longer than a request may take: the
            // contention backoff may be long where wake-ups are trusted, and a failed request leaves no
            // place in any line for a wake-up to find (a lost connection must not cost the 10 minutes a
            // user chose as the poll interval of a busy lock)
            long delay = e.getCause() instanceof TimeoutException ? 0
                    : Math.min(Backoff.delayNanos(options.backoff(), attempts), options.requestTimeout().toNanos());
            Disposable t = schedule(this::attempt, delay);
            if (t == null) {
                return;
            }
            synchronized (this) {
                if (done) {
                    t.dispose();
                } else {
                    disposeWaitTimer();
                    waitTimer = t;
                }
            }
            return;
        }
        fail(e, "failed");
    }

    // ---- wake-ups

    /** A store event of the name, shared by the lock client's local waiters ({@link NotificationHub}). */
    void onEvent(NotificationHub.Wake w) {
        LockEvent event = w.event;
        // Subscribed: re-check, a release may have slipped in before the subscription went live.
        // Released: the first interested local waiter claims it, the others keep their timers.
        if (event instanceof LockEvent.Subscribed) {
            notificationsLive(true);
        }
        if (event instanceof LockEvent.Subscribed || event instanceof LockEvent.Released) {
            wakeUp(w);
        }
    }

    /**
     * @param byTurn         whether the store wakes this acquire at its turn in the store's line
     * @param remainingNanos the remaining TTL of what stands in the way, or {@code UNKNOWN}
     * @return how long to wait before asking again, unless woken earlier
     */
    private long waitNanos(boolean byTurn, long remainingNanos) {
        if (byTurn) {
            // the store keeps this acquire's place and wakes it when what stands before it goes: no
            // shared change stream that would wake every waiting client on each change. The timer is
            // only a safety net then (a watch the store lost): not before the backoff's cap or a third
            // of the lease time, so waiters in line do not poll the store
            long safety = safetyNetNanos();
            return remainingNanos == UNKNOWN ? safety : Math.min(safety, Math.max(ONE_MS, remainingNanos));
        }
        long delay = Backoff.delayNanos(options.backoff(), attempts);
        if (remainingNanos == UNKNOWN) {
            return delay;
        }
        boolean live;
        synchronized (this) {
            live = notificationsLive;
        }
        // a backoff with a bounded number of attempts is a schedule the caller asked for: spent as given
        if (live && options.backoff().maxAttempts == Long.MAX_VALUE) {
            // a release wakes this acquire (its notifications are live and it re-checked since they went
            // live, or they were live when it asked and notified no release since), and what stands in the way
            // expires by then at the latest (+1 ms to land after it): the timer is a safety net, not a poll, so
            // a waiter does not ask again between a release's notification and its own turn
            return Math.min(safetyNetNanos(), Math.max(0, remainingNanos) + ONE_MS);
        }
        // what stands in the way expires by then at the latest (+1 ms to land after it)
        return Math.min(delay, Math.max(0, remainingNanos) + ONE_MS);
    }

    /**
     * @return the wait of an acquire that something else will wake (a store's turn, a live notification): a
     *         safety net only, not before the backoff's cap or a third of the lease time
     */
    private long safetyNetNanos() {
        return Math.max(options.backoff().maxBackoff.toNanos(), options.leaseTime().toNanos() / 3);
    }

    /**
     * @param live {@code true} when this acquire's release notifications went live (it is woken to re-check
     *             right after), {@code false} when they ended: its timers are polls again
     */
    void notificationsLive(boolean live) {
        synchronized (this) {
            notificationsLive = live;
        }
    }

    /** A wake-up picked for this acquire ({@link Waiters}: one waiter per release, or all). */
    void wakeUp() {
        wakeUp(null);
    }

    /**
     * @param claim the release to claim first, or null when this acquire was picked already ({@link Waiters} picks
     *              one waiter per release: a wake it drops is lost for every waiter)
     */
    private void wakeUp(NotificationHub.@Nullable Wake claim) {
        boolean retry;
        synchronized (this) {
            // anything but ended (or waiting on a store's queue turn) takes the wake: waiting, a request in flight
            // (its answer may predate this release), or between a busy answer and the wait it starts
            boolean interested = !done && !turnWaiting;
            if (!interested || (claim != null && !claim.claim())) {
                return;
            }
            retry = waiting;
            if (!retry) {
                wakePending = true; // the next busy answer asks again at once
            }
        }
        if (retry) {
            attempt();
        }
    }

    private void onWake() {
        boolean retry;
        synchronized (this) {
            retry = waiting;
        }
        if (retry) {
            attempt();
        }
    }

    private void onWaitTimeout() {
        LockException error;
        synchronized (this) {
            error = lastError != null && !waiting ? lastError : new LockTimeoutException(name, options.waitTimeout());
        }
        fail(error, "wait timeout");
    }

    // ---- ending

    void closed() {
        fail(new LockClientClosedException(name), "client closed");
    }

    private void fail(LockException error, String why) {
        if (finish(error, true)) {
            if (listener.active()) {
                listener.onAcquireFailed(name, error, waited());
            }
            emitError(error);
        }
    }

    /**
     * Ends the operation without a grant. Returns whether this call ended it (and so must
     * signal the subscriber, unless it cancelled).
     */
    private boolean finish(LockException error, boolean signal) {
        boolean releaseNow;
        synchronized (this) {
            if (done) {
                return false;
            }
            done = true;
            waiting = false;
            disposeAll();
            // with a request in flight, its answer (seeing done) releases; otherwise release now
            releaseNow = mayHoldKey && (!inFlight || turnWaiting);
            if (inFlight && !turnWaiting && settling == null) {
                // registered before this operation leaves the engine's books: close() waits for it
                settling = site.pendingCleanUp(name);
            }
        }
        if (releaseNow) {
            giveBack(false);
        }
        site.operationEnded(this);
        return true;
    }

    /**
     * The request in flight when this operation ended has settled: release what it may have
     * taken, then tell close() this operation is finished with the store.
     */
    private void settleLate(boolean mayHold) {
        Runnable s;
        synchronized (this) {
            s = settling;
            settling = null;
        }
        Mono<Void> release = mayHold ? giveBack(false) : Mono.empty();
        if (s != null) {
            release.doFinally(x -> s.run()).subscribe(null, e -> { });
        }
    }

    private synchronized boolean isDone() {
        return done;
    }

    private synchronized long firstSentAt() {
        return firstSentAt;
    }

    /** Schedules a timer; a scheduler that refuses (disposed) ends the operation with an error, and null is returned. */
    private Disposable schedule(Runnable task, long delayNanos) {
        try {
            return scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            fail(new io.reactivelocks.LockException(name, "the lock scheduler refused a timer: " + scheduler, e), "scheduler");
            return null;
        }
    }

    // guarded by this
    private void disposeWaitTimer() {
        if (waitTimer != null) {
            waitTimer.dispose();
            waitTimer = null;
        }
    }

    // guarded by this
    private void disposeTurnWake() {
        if (turnWake != null) {
            turnWake.dispose();
            turnWake = null;
        }
    }

    // guarded by this
    private void disposeAll() {
        disposeWaitTimer();
        disposeTurnWake();
        if (timeoutTimer != null) {
            timeoutTimer.dispose();
            timeoutTimer = null;
        }
        if (events != null) {
            events.dispose();
            events = null;
        }
        if (turn != null) {
            turn.dispose();
            turn = null;
        }
    }
}
