package io.reactivelocks.internal;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.BackendErrors;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.Renewal;
import io.reactivelocks.spi.RenewalMode;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The live state of one grant of any concept — a lock, a fair lock, a semaphore permit, a read or
 * write grant: deadline, renewal, loss and release, the same rules for all of them. Its engine
 * ({@link LeaseOwner}: the mutex engine or the grant engine) supplies the store calls. {@link Lease}
 * values handed to users are snapshots ({@link LeaseSnapshot}) that share this handle; it renews in
 * {@link RenewalScheduler} batches. Not API.
 */
public final class LeaseHandle extends RenewalScheduler.Member<RenewRequest> implements LeaseSnapshot.Source {

    private static final Logger LOG = Loggers.getLogger(LeaseHandle.class);

    private static final int ACTIVE = 0;
    private static final int LOST = 1;
    private static final int RELEASED = 2;

    final LeaseOwner client;
    /** The store outage's epoch when the release was sent ({@link StoreOutage#failed(Throwable, int)}). */
    private volatile int releaseEpoch;
    final HeldLock lock;
    final LockOptions options;
    final Scheduler scheduler;
    final LockClock clock;
    /** The listener of the acquire that granted this lease. */
    final SafeListener listener;

    private static final Object COMPLETE = new Object();
    /** The hold stream's sink, made by the first {@link #updates()} call: acquire and withLock never need one. */
    private volatile Updates updates;
    private final long grantedAt;
    // guarded by this; made by the first lost() call
    private Sinks.Empty<Void> lostSink;
    // guarded by this; made by the first revoked() call, completed when the lease ends (lost or released)
    private Sinks.Empty<Void> endSink;
    // guarded by this: the withLock bodies running under this lease (see watchLoss)
    private LossWatcher watchers;

    // written under this; volatile so that isActive() (asked per lease and renewal tick) takes no monitor
    private volatile int state = ACTIVE;
    private long validUntil;
    private LeaseSnapshot current;
    private Disposable sessionSubscription;
    private String lossReason;

    /** The payload stored with the grant, as last confirmed by the store. */
    volatile String payload;

    LeaseHandle(LeaseOwner client, HeldLock lock, LockOptions options, Scheduler scheduler,
                RenewalScheduler<RenewRequest> renewals, long validUntil, SafeListener listener) {
        super(renewals, client.leaseDeadlines(scheduler, options.clock()));
        this.client = client;
        this.listener = listener;
        this.lock = lock;
        this.options = options;
        this.scheduler = scheduler;
        this.clock = options.clock();
        this.validUntil = validUntil;
        this.current = new LeaseSnapshot(this, validUntil);
        this.grantedAt = clock.nanoTime();
    }

    private Duration held() {
        return Duration.ofNanos(Math.max(0, clock.nanoTime() - grantedAt));
    }

    /** Starts the deadline and renewal; called once, right after the grant. */
    void start(long sentAt) {
        signal(current);
        synchronized (this) {
            scheduleDeadline();
        }
        if (client.renewalMode() == RenewalMode.SESSION) {
            Disposable d = client.sessionRenewals(lock, clock).subscribe(
                    r -> onRenewed(r.sentAtNanos(), r.ttl()),
                    e -> lose("session lost: " + e),
                    () -> lose("session ended"));
            boolean dispose;
            synchronized (this) {
                dispose = state != ACTIVE;
                sessionSubscription = d;
            }
            if (dispose) {
                d.dispose();
            }
        } else {
            renewals.schedule(this, sentAt + options.renewalInterval().toNanos());
        }
    }

    String name() {
        return lock.name();
    }

    @Override
    public HeldLock heldLock() {
        return lock;
    }

    @Override
    public LockClock clock() {
        return clock;
    }

    @Override
    public @org.jspecify.annotations.Nullable String payload() {
        return payload;
    }

    @Override
    public boolean isActive() {
        return state == ACTIVE;
    }

    @Override
    public synchronized long validUntil() {
        return validUntil;
    }

    /** @return the lease at its current deadline; made on first use after a renewal (a renewal nobody looks at makes none) */
    synchronized LeaseSnapshot snapshot() {
        LeaseSnapshot c = current;
        if (c.validUntilNanos() != validUntil) {
            c = new LeaseSnapshot(this, validUntil);
            current = c;
        }
        return c;
    }

    /** @return the lease as renewed, replaying the latest; completes when the lease ends */
    Flux<Lease> updates() {
        Updates u = updates;
        if (u == null) {
            // a grant whose deadline passed before its stream was subscribed (no timer acted yet) is lost now:
            // the stream then ends without a lease and the hold asks again (HoldAgain)
            confirmValid("its deadline passed before the grant was delivered");
            synchronized (this) {
                u = updates;
                if (u == null) {
                    u = new Updates();
                    // the state as of now; signals from now on follow it (they read `updates` after their change)
                    u.pending.offer(state == ACTIVE ? snapshot() : COMPLETE);
                    updates = u;
                }
            }
            u.drain();
        }
        return u.sink.asFlux();
    }

    @Override
    public Mono<Void> lost() {
        synchronized (this) {
            if (state == LOST) {
                return Mono.empty();
            }
            if (lostSink == null) {
                lostSink = Sinks.empty();
            }
            return lostSink.asMono();
        }
    }

    @Override
    public Mono<String> revoked() {
        Mono<Void> ended;
        synchronized (this) {
            if (state != ACTIVE) {
                return Mono.empty();
            }
            if (endSink == null) {
                endSink = Sinks.empty();
            }
            ended = endSink.asMono();
        }
        String owner = lock.owner();
        return client.events(lock.name())
                .filter(e -> e instanceof LockEvent.Revoked r && (r.owner() == null || r.owner().equals(owner)))
                .map(e -> ((LockEvent.Revoked) e).reason())
                .next()
                // a store's channel that fails gives no request: the lease's end still ends the wait
                .onErrorResume(e -> ended.then(Mono.empty()))
                .takeUntilOther(ended);
    }

    /**
     * Something told once when this lease is lost (a {@code withLock} body running under it):
     * what a subscription to {@link #lost()} did, without its sink and subscriber objects. Its
     * fields belong to the lease.
     */
    abstract static class LossWatcher {
        // guarded by the lease
        private LossWatcher prevWatcher;
        private LossWatcher nextWatcher;
        private boolean watching;

        /** The lease was lost; called once, outside the lease's monitor. */
        abstract void onLost();
    }

    /**
     * Tells {@code w} when this lease is lost, until {@link #unwatchLoss}.
     *
     * @return false, and nothing registered, when the lease is lost already
     */
    boolean watchLoss(LossWatcher w) {
        synchronized (this) {
            if (state == LOST) {
                return false;
            }
            if (state == RELEASED || w.watching) {
                return true; // a released lease is never lost
            }
            w.watching = true;
            w.prevWatcher = null;
            w.nextWatcher = watchers;
            if (watchers != null) {
                watchers.prevWatcher = w;
            }
            watchers = w;
            return true;
        }
    }

    /** Stops telling {@code w} (no effect if it is not watching). */
    synchronized void unwatchLoss(LossWatcher w) {
        if (!w.watching) {
            return;
        }
        w.watching = false;
        LossWatcher p = w.prevWatcher;
        LossWatcher n = w.nextWatcher;
        if (p == null) {
            watchers = n;
        } else {
            p.nextWatcher = n;
        }
        if (n != null) {
            n.prevWatcher = p;
        }
        w.prevWatcher = null;
        w.nextWatcher = null;
    }

    /**
     * @return true while the lease is active and its deadline has not passed; a passed deadline
     *         that no timer has acted on yet (the process was paused) is acted on now
     */
    boolean confirmValid() {
        return confirmValid("its deadline passed while the work ran (a pause longer than the lease?)");
    }

    /** @return as {@link #confirmValid()}, losing the lease for {@code reason} when its deadline passed */
    private boolean confirmValid(String reason) {
        boolean expired;
        synchronized (this) {
            if (state != ACTIVE) {
                return false;
            }
            expired = clock.nanoTime() >= validUntil;
        }
        if (expired) {
            lose(reason);
            return false;
        }
        return true;
    }

    synchronized String lossReason() {
        return lossReason;
    }

    // ---- renewal

    @Override
    protected RenewRequest renewRequest() {
        return new RenewRequest(lock, options.leaseTime());
    }

    @Override
    protected long renewalIntervalNanos() {
        return options.renewalInterval().toNanos();
    }

    @Override
    protected Duration requestTimeout() {
        return options.requestTimeout();
    }

    /** @return the store outage's epoch now, given back to {@link #onRenewFailed} */
    @Override
    protected int onRenewalSent() {
        int epoch = client.outage().epoch();
        if (listener.observesRenewalStarts()) {
            listener.onRenewalStarted(lock.name(), lock.token());
        }
        return epoch;
    }

    /** @return true when the lease is still active and must be renewed again (the caller schedules it) */
    @Override
    protected boolean onRenewOutcome(long sentAt, @Nullable RenewOutcome outcome) {
        client.outage().answered();
        if (outcome == null || !outcome.renewed()) {
            lose("the store says the lock is no longer ours");
            return false;
        }
        return onRenewed(sentAt, outcome.ttl());
    }

    /** @param epoch the store outage's epoch when the renewal was sent */
    @Override
    protected void onRenewFailed(LockException error, int epoch) {
        client.outage().failed(error, epoch);
        listener.onRenewalFailed(lock.name(), lock.token(), error);
        if (!BackendErrors.isTransient(error)) {
            lose("renewal failed: " + error.getMessage());
            return;
        }
        long retryAt = clock.nanoTime() + renewalRetryNanos();
        boolean retry;
        synchronized (this) {
            retry = state == ACTIVE && retryAt < validUntil;
        }
        if (retry) {
            LOG.debug("renewal of lock '{}' failed, retrying: {}", lock.name(), error.toString());
            renewals.schedule(this, retryAt);
        }
        // otherwise the deadline timer ends the lease
    }

    private long renewalRetryNanos() {
        long r = options.renewalInterval().toNanos() / 8;
        return Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(TimeUnit.SECONDS.toNanos(1), r));
    }

    /** @return true when the lease is still active after the update */
    boolean onRenewed(long sentAt, Duration ttl) {
        LeaseSnapshot next;
        synchronized (this) {
            if (state != ACTIVE) {
                return false;
            }
            long until = sentAt + options.validityNanos(ttl);
            // a confirmation answered after its own validity ran out extends nothing: the deadline acts
            if (until <= validUntil || until <= clock.nanoTime()) {
                next = null;
            } else {
                validUntil = until;
                // a new snapshot only for a hold stream; snapshot() makes one when asked
                next = updates != null ? snapshot() : null;
                scheduleDeadline();
            }
        }
        if (listener.observesRenewals()) {
            listener.onRenewed(lock.name(), lock.token());
        }
        if (next != null) {
            signal(next);
        }
        return true;
    }

    // guarded by this
    private void scheduleDeadline() {
        deadlines.set(this, validUntil);
    }

    @Override
    protected void onUnwatched() {
        // no timer can watch this lease: end it now rather than let it outlive its deadline unseen
        Schedulers.parallel().schedule(() -> lose("the lock scheduler refused the deadline timer"));
    }

    @Override
    protected void onDeadline() {
        boolean expired;
        synchronized (this) {
            if (state != ACTIVE) {
                return;
            }
            expired = clock.nanoTime() >= validUntil;
            if (!expired) {
                scheduleDeadline();
            }
        }
        if (expired) {
            lose("its deadline passed without a confirmed renewal");
        }
    }

    /** Emits on the hold stream, if anyone asked for it. Called after the change it reports. */
    private void signal(Object s) {
        Updates u = updates;
        if (u != null) {
            u.pending.offer(s);
            u.drain();
        }
    }

    /**
     * The hold stream. Signals from the renewal thread (a new deadline) and the timer or release
     * thread (completion) can meet; a serialized sink refuses the second one at that moment
     * (FAIL_NON_SERIALIZED) and a refused completion would leave the hold stream running past
     * the deadline. So every signal goes through this queue, drained by one thread at a time.
     */
    private static final class Updates {
        final Sinks.Many<Lease> sink = Sinks.many().replay().latest();
        final Queue<Object> pending = new ConcurrentLinkedQueue<>();
        final AtomicInteger wip = new AtomicInteger();

        void drain() {
            if (wip.getAndIncrement() != 0) {
                return; // the thread emitting now will emit this one too
            }
            int missed = 1;
            do {
                Object next;
                while ((next = pending.poll()) != null) {
                    if (next == COMPLETE) {
                        sink.tryEmitComplete();
                    } else {
                        sink.tryEmitNext((Lease) next);
                    }
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }

    // ---- payload

    /** Owner- and token-checked on the store; a "not held" answer ends the lease as lost. */
    @Override
    public Mono<Void> updatePayload(@org.jspecify.annotations.Nullable String newPayload) {
        if (newPayload != null) {
            LockOptions.checkPayload(newPayload, "payload");
        }
        return Mono.defer(() -> {
            if (!isActive()) {
                return Mono.error(new io.reactivelocks.LockLostException(lock.name(), lock.token(),
                        "the lease is no longer held (" + (lossReason() == null ? "released" : lossReason()) + ")"));
            }
            return client.updatePayloadOnServer(lock, newPayload, options).flatMap(written -> {
                if (written) {
                    payload = newPayload;
                    return Mono.<Void>empty();
                }
                lose("the store says the lock is no longer ours");
                return Mono.error(new io.reactivelocks.LockLostException(lock.name(), lock.token(),
                        "the store says the lock is no longer ours"));
            });
        });
    }

    // ---- loss and release

    void lose(String reason) {
        Disposable session;
        Sinks.Empty<Void> lostWaiters;
        Sinks.Empty<Void> ended;
        LossWatcher lostWatchers;
        synchronized (this) {
            if (state != ACTIVE) {
                return;
            }
            state = LOST;
            lossReason = reason;
            session = stopTimers();
            lostWaiters = lostSink;
            ended = endSink;
            // taken off the list here: an unwatchLoss from now on finds them gone, so the links stay as read
            lostWatchers = watchers;
            watchers = null;
            for (LossWatcher w = lostWatchers; w != null; w = w.nextWatcher) {
                w.watching = false;
            }
        }
        if (session != null) {
            session.dispose();
        }
        LOG.debug("lease on lock '{}' (token {}) lost: {}", lock.name(), lock.token(), reason);
        client.forget(this);
        if (listener.active()) {
            listener.onLost(lock.name(), lock.token(), reason, held());
        }
        if (lostWaiters != null) {
            lostWaiters.tryEmitEmpty();
        }
        if (ended != null) {
            ended.tryEmitEmpty();
        }
        for (LossWatcher w = lostWatchers; w != null; ) {
            LossWatcher next = w.nextWatcher;
            w.onLost();
            w = next;
        }
        signal(COMPLETE);
        // Only now that the holder has been told: clean up on the store (owner-checked, so
        // harmless if the key is gone or someone else's), without anyone waiting on it.
        client.releaseDetached(lock.name(), lock.owner(), options);
    }

    /** Idempotent, owner-checked release; later subscriptions complete at once. */
    @Override
    public Mono<Void> release() {
        return new Release();
    }

    /**
     * The release after a scoped body was not confirmed: counted and reported; renewal stopped at
     * the release, so the lease expires by itself (its token is fenced). A store that did not answer
     * (a transient failure) is an outage, which the client logs once ({@link StoreOutage}): the line
     * of each such release is then at DEBUG, not one WARN per request.
     */
    void releaseUnconfirmed(Throwable error) {
        client.releaseUnconfirmed();
        listener.onReleaseUnconfirmed(lock.name(), lock.token(), error);
        client.outage().failed(error, releaseEpoch);
        if (BackendErrors.isTransient(error)) {
            LOG.debug("lock '{}': the store did not confirm the release after the body ended ({}); the lease expires by itself",
                    lock.name(), error.getMessage());
        } else {
            LOG.warn("lock '{}': the store did not confirm the release after the body ended ({}); the lease expires by itself",
                    lock.name(), error.getMessage());
        }
    }

    @Override
    public Mono<Void> releaseAfterWork() {
        return release().onErrorResume(e -> {
            releaseUnconfirmed(e);
            return Mono.empty();
        });
    }

    /** The release as one small operator (no {@code defer} and lambda per call). */
    private final class Release extends Mono<Void> {
        @Override
        public void subscribe(reactor.core.CoreSubscriber<? super Void> actual) {
            Mono<Void> work;
            try {
                work = releaseNow();
            } catch (RuntimeException e) {
                reactor.core.publisher.Operators.error(actual, e);
                return;
            }
            if (work == null) {
                reactor.core.publisher.Operators.complete(actual);
            } else {
                work.subscribe(new ReleaseRelay(actual));
            }
        }
    }

    /**
     * The release now, as {@link #release()} subscribed does (for the engine's own operators, one
     * object less); idempotent.
     *
     * @return the store's release to wait for (to be subscribed once), or null when there is nothing to wait for
     */
    @Nullable Mono<Void> releaseNow() {
        Disposable session;
        boolean wasLost;
        Sinks.Empty<Void> ended;
        synchronized (this) {
            if (state == RELEASED) {
                return null;
            }
            wasLost = state == LOST;
            state = RELEASED;
            releaseEpoch = client.outage().epoch();
            session = stopTimers();
            ended = endSink;
        }
        if (ended != null) {
            ended.tryEmitEmpty();
        }
        if (wasLost) {
            // the lease is gone already and lose() has sent the store's clean-up: nothing to wait for
            return null;
        }
        if (session != null) {
            session.dispose();
        }
        client.forget(this);
        if (listener.active()) {
            listener.onReleased(lock.name(), lock.token(), held());
        }
        signal(COMPLETE);
        return client.trackedReleaseOnServer(lock.name(), lock.owner(), options);
    }

    // guarded by this
    private Disposable stopTimers() {
        renewals.cancel(this);
        deadlines.remove(this);
        Disposable s = sessionSubscription;
        sessionSubscription = null;
        return s;
    }

    @Override
    public String toString() {
        return "Lease{" + lock.name() + ", token " + lock.token() + ", owner " + lock.owner() + "}";
    }
}
