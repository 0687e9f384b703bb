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
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * One acquire: a small state machine driven by store answers, timers and release notifications.
 *
 * <ul>
 *   <li>one attempt = one {@code tryGrant} call; its subscription is never cancelled by the
 *       caller, so a grant that arrives after a cancel is seen — and released;</li>
 *   <li>on {@code Busy} it subscribes to the lock's events (once); when that subscription goes
 *       live it re-checks at once (a release between the answer and the subscription is not
 *       missed), then waits for the first of a release event, the holder's TTL and the next
 *       jittered backoff step;</li>
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

    private static final Mono<Attempt> NO_QUEUE_ANSWER =
            Mono.error(() -> new IllegalStateException("store ended the queue wait without an answer"));

    private final DefaultLockClient client;
    private final String name;
    private final String owner;
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
    private boolean requested;
    private boolean cancelled;
    private LeaseHandle granted;      // granted, not yet handed over
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
        AcquireOperation op = new AcquireOperation(client, name, options, wait, client.schedulerFor(options), actual,
                deliverSnapshot);
        actual.onSubscribe(op);
        client.register(op);
    }

    private AcquireOperation(DefaultLockClient client, String name, LockOptions options, boolean wait,
                             Scheduler scheduler, CoreSubscriber<Object> actual, boolean deliverSnapshot) {
        this.client = client;
        this.deliverSnapshot = deliverSnapshot;
        this.name = name;
        this.owner = GrantRequest.newOwner();
        this.options = options;
        this.wait = wait;
        this.scheduler = scheduler;
        this.actual = actual;
        this.startedAt = options.clock().nanoTime();
        this.listener = client.listener().forAcquire(name, actual.currentContext());
    }

    /** @return the lock this acquire is for */
    String name() {
        return name;
    }

    private java.time.Duration waited() {
        return java.time.Duration.ofNanos(Math.max(0, options.clock().nanoTime() - startedAt));
    }

    // ---- Subscription

    @Override
    public void request(long n) {
        if (!Operators.validate(n)) {
            return;
        }
        LeaseHandle deliver;
        synchronized (this) {
            requested = true;
            deliver = granted;
            granted = null;
        }
        if (deliver != null) {
            actual.onNext(deliverSnapshot ? deliver.snapshot() : deliver);
            actual.onComplete();
        }
    }

    @Override
    public void cancel() {
        LeaseHandle undelivered;
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
            undelivered.release().subscribe(null, e -> { });
            return;
        }
        if (finish(null, false)) {
            listener.onAcquireCancelled(name, waited());
        }
    }

    private void emitGranted(LeaseHandle lease) {
        boolean deliver;
        boolean giveBack;
        synchronized (this) {
            giveBack = cancelled;
            deliver = !cancelled && requested;
            if (!deliver && !cancelled) {
                granted = lease; // handed over on request
            }
        }
        if (giveBack) {
            lease.release().subscribe(null, e -> { });
        } else if (deliver) {
            actual.onNext(deliverSnapshot ? lease.snapshot() : lease);
            actual.onComplete();
        }
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
            client.operationEnded(this);
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
        GrantRequest request;
        synchronized (this) {
            if (done || inFlight) {
                return;
            }
            waiting = false;
            disposeWaitTimer();
            attempts++;
            inFlight = true;
            mayHoldKey = true; // the request may create a key of ours, whatever we hear back
            request = new GrantRequest(name, owner, options.leaseTime(), wait, options.clock(), options.payload());
        }
        long sentAt = options.clock().nanoTime();
        synchronized (this) {
            if (firstSentAt == Long.MIN_VALUE) {
                firstSentAt = sentAt;
            }
        }
        client.deadlines(scheduler, options.clock())
                .subscribe(client.backend().tryGrant(request), options.requestTimeout(),
                        new AttemptAnswer(sentAt, client.outage().epoch()));
    }

    /**
     * The answer to one attempt: one object instead of {@code switchIfEmpty}, a lambda subscriber
     * and its two lambdas. Requests everything at once; an empty answer breaks the store's contract.
     */
    private final class AttemptAnswer implements CoreSubscriber<Attempt> {
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
        public void onNext(Attempt a) {
            if (answered) {
                return;
            }
            answered = true;
            client.outage().answered();
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

    private void onAnswer(Attempt answer, long sentAt) {
        if (answer instanceof Attempt.Granted g) {
            onGranted(g, sentAt);
        } else if (answer instanceof Attempt.Busy b) {
            onBusy(b.holder());
        } else if (answer instanceof Attempt.Queued q) {
            onQueued(q);
        }
    }

    private void onGranted(Attempt.Granted g, long sentAt) {
        synchronized (this) {
            if (turnWaiting && done) {
                return; // the turn was disposed and its entry released by finish()
            }
            turnWaiting = false;
        }
        long validFrom = g.validFromNanos() == Attempt.SENT_TIME ? sentAt : g.validFromNanos();
        long validUntil = validFrom + options.validityNanos(g.ttl());
        if (validUntil - options.clock().nanoTime() <= 0) {
            onExpiredGrant(g);
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
        LeaseHandle lease = client.newLease(name, owner, g.token(), options, scheduler, validUntil, listener);
        client.operationEnded(this);
        if (listener.active()) {
            listener.onAcquired(name, g.token(), waited());
        }
        lease.start(validFrom);
        emitGranted(lease);
    }

    /**
     * A grant whose answer came after its own validity had passed (a paused JVM, a slow store): it
     * is given back, and once the store confirmed that (so the release cannot undo a later grant to
     * the same owner) the acquire asks again — while its wait budget lasts (the wait-timeout timer
     * keeps running); a {@code tryAcquire} asks once more, then answers as for a busy lock.
     */
    private void onExpiredGrant(Attempt.Granted g) {
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
        LOG.debug("grant of lock '{}' arrived after its validity ({}) had passed; given back{}", name, g.ttl(),
                again ? ", asking again" : "");
        client.releaseDetached(name, owner, options).subscribe(null, e -> { }, () -> afterGiveBack(again));
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
            client.operationEnded(this);
            listener.onContended(name);
            emitEmpty();
        }
    }

    private void onBusy(Holder holder) {
        boolean subscribe;
        boolean now;
        synchronized (this) {
            inFlight = false;
            turnWaiting = false;
            mayHoldKey = false;
            if (done) {
                settleLate(false);
                return;
            }
            if (!wait) {
                done = true;
                disposeAll();
            }
        }
        if (!wait) {
            client.operationEnded(this);
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
        long delay = Backoff.delayNanos(options.backoff(), attempts);
        if (holder != null && holder.remaining() != null) {
            // the holder's key expires by then at the latest (+1 ms to land after it)
            delay = Math.min(delay, holder.remaining().toNanos() + TimeUnit.MILLISECONDS.toNanos(1));
        }
        synchronized (this) {
            if (done) {
                return;
            }
            waiting = true;
            now = wakePending;
            wakePending = false;
            subscribe = !eventsRequested;
            eventsRequested = true;
        }
        if (subscribe) {
            Disposable d = client.hub().wakes(name).subscribe(this::onEvent, e -> { /* timers still wake us */ });
            synchronized (this) {
                if (!done) {
                    events = d;
                    d = null;
                }
            }
            if (d != null) {
                d.dispose();
                return;
            }
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
        int epoch = client.outage().epoch();
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
        LockException e = BackendErrors.map(client.backend().name(), name, "acquire", error);
        client.outage().failed(e, epoch);
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
            long delay = Backoff.delayNanos(options.backoff(), attempts);
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

    private void onEvent(NotificationHub.Wake w) {
        boolean retry;
        synchronized (this) {
            LockEvent event = w.event;
            boolean wake = event instanceof LockEvent.Subscribed || event instanceof LockEvent.Released;
            boolean interested = waiting || (inFlight && !turnWaiting);
            // Subscribed: re-check, a release may have slipped in before the subscription went live.
            // Released: the first interested local waiter claims it, the others keep their timers.
            if (!wake || !interested || !w.claim()) {
                return;
            }
            retry = waiting;
            if (inFlight && !turnWaiting) {
                wakePending = true; // the answer in flight may predate this release
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
                // registered before this operation leaves the client's books: close() waits for it
                settling = client.pendingCleanUp(name);
            }
        }
        if (releaseNow) {
            client.releaseDetached(name, owner, options, false);
        }
        client.operationEnded(this);
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
        Mono<Void> release = mayHold ? client.releaseDetached(name, owner, options, false) : Mono.empty();
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
    private void disposeAll() {
        disposeWaitTimer();
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
