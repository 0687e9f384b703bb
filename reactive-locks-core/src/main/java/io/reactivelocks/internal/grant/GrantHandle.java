package io.reactivelocks.internal.grant;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.internal.LeaseSnapshot;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The live state of one grant (a semaphore permit, a read or write grant): deadline, renewal
 * (every renewal interval, retried quickly on transient errors while time remains), loss and
 * release. Users see {@link LeaseSnapshot}s. Not API.
 */
public final class GrantHandle implements LeaseSnapshot.Source {

    private static final reactor.util.Logger LOG = reactor.util.Loggers.getLogger(GrantHandle.class);

    private static final int ACTIVE = 0;
    private static final int LOST = 1;
    private static final int RELEASED = 2;

    private final GrantEngine engine;
    final HeldLock grant;
    private final LockOptions options;
    private final Scheduler scheduler;
    private final LockClock clock;
    private final Sinks.Many<Lease> updates = Sinks.many().replay().latest();
    private final Sinks.Empty<Void> lostSink = Sinks.empty();
    /** Completed when the grant ends, lost or released: the end of a {@link #revoked()} wait. */
    private final Sinks.Empty<Void> endSink = Sinks.empty();
    /** The listener of the acquire that granted this grant. */
    private final io.reactivelocks.internal.SafeListener listener;
    private volatile long grantedAt;

    // guarded by this
    private int state = ACTIVE;
    private long validUntil;
    private LeaseSnapshot current;
    private Disposable deadlineTimer;
    private Disposable renewalTimer;
    private Disposable renewalCall;
    private String lossReason;

    GrantHandle(GrantEngine engine, HeldLock grant, LockOptions options, Scheduler scheduler, long validUntil,
            io.reactivelocks.internal.SafeListener listener) {
        this.engine = engine;
        this.listener = listener;
        this.grant = grant;
        this.options = options;
        this.scheduler = scheduler;
        this.clock = options.clock();
        this.validUntil = validUntil;
        this.current = new LeaseSnapshot(this, validUntil);
    }

    /** Starts the deadline and the renewals; called once, right after the grant. */
    void start(long sentAt) {
        grantedAt = clock.nanoTime();
        emit(current);
        synchronized (this) {
            if (state != ACTIVE) {
                return;
            }
            scheduleDeadline();
            scheduleRenewal(sentAt + options.renewalInterval().toNanos());
        }
    }

    @Override
    public HeldLock heldLock() {
        return grant;
    }

    @Override
    public LockClock clock() {
        return clock;
    }

    /** @return null: these grants carry no payload */
    @Override
    public @org.jspecify.annotations.Nullable String payload() {
        return null;
    }

    /** These grants carry no payload: fails with {@link UnsupportedOperationException}. */
    @Override
    public Mono<Void> updatePayload(@org.jspecify.annotations.Nullable String payload) {
        return Mono.error(new UnsupportedOperationException("a " + engine.concept() + " grant carries no payload"));
    }

    @Override
    public synchronized boolean isActive() {
        return state == ACTIVE;
    }

    @Override
    public synchronized long validUntil() {
        return validUntil;
    }

    /** @return the lease as users see it now */
    public synchronized LeaseSnapshot snapshot() {
        return current;
    }

    synchronized String lossReason() {
        return lossReason;
    }

    /** @return the lease and its renewals; empty when the grant was lost before this call (see HoldAgain) */
    Flux<Lease> updates() {
        confirmValid("its deadline passed before the grant was delivered");
        synchronized (this) {
            if (state != ACTIVE) {
                return Flux.empty();
            }
        }
        return updates.asFlux();
    }

    @Override
    public Mono<Void> lost() {
        return lostSink.asMono();
    }

    @Override
    public Mono<String> revoked() {
        synchronized (this) {
            if (state != ACTIVE) {
                return Mono.empty();
            }
        }
        String owner = grant.owner();
        Mono<Void> ended = endSink.asMono();
        return engine.storeEvents(grant.name())
                .filter(e -> e instanceof LockEvent.Revoked r && (r.owner() == null || r.owner().equals(owner)))
                .map(e -> ((LockEvent.Revoked) e).reason())
                .next()
                // a store's channel that fails gives no request: the grant's end still ends the wait
                .onErrorResume(e -> ended.then(Mono.<String>empty()))
                .takeUntilOther(ended);
    }

    /** @return true while active and before the deadline; a passed deadline no timer acted on yet is acted on now */
    boolean confirmValid() {
        return confirmValid("its deadline passed while the work ran");
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

    // guarded by this
    private void scheduleRenewal(long at) {
        long delay = Math.max(0, at - clock.nanoTime());
        renewalTimer = scheduler.schedule(this::renew, delay, TimeUnit.NANOSECONDS);
    }

    // guarded by this
    private void scheduleDeadline() {
        if (deadlineTimer != null) {
            deadlineTimer.dispose();
        }
        long delay = Math.max(0, validUntil - clock.nanoTime());
        deadlineTimer = scheduler.schedule(this::onDeadline, delay, TimeUnit.NANOSECONDS);
    }

    private void onDeadline() {
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

    private Duration held() {
        return Duration.ofNanos(clock.nanoTime() - grantedAt);
    }

    private void renew() {
        long sentAt = clock.nanoTime();
        listener.onRenewalStarted(grant.name(), grant.token());
        Disposable call = engine.renewOnStore(List.of(new RenewRequest(grant, options.leaseTime())), options)
                .subscribe(outcomes -> onRenewOutcome(sentAt, outcomes.isEmpty() ? null : outcomes.get(0)),
                        e -> onRenewFailed(engine.mapError(grant.name(), "renewal", e)));
        synchronized (this) {
            if (state == ACTIVE) {
                renewalCall = call;
                return;
            }
        }
        call.dispose();
    }

    private void onRenewOutcome(long sentAt, RenewOutcome outcome) {
        if (outcome == null || !outcome.renewed()) {
            lose("the store says the grant is no longer ours");
            return;
        }
        listener.onRenewed(grant.name(), grant.token());
        LeaseSnapshot next = null;
        synchronized (this) {
            if (state != ACTIVE) {
                return;
            }
            long until = sentAt + options.validityNanos(outcome.ttl());
            if (until > validUntil) {
                validUntil = until;
                current = new LeaseSnapshot(this, until);
                next = current;
                scheduleDeadline();
            }
            scheduleRenewal(sentAt + options.renewalInterval().toNanos());
        }
        if (next != null) {
            emit(next);
        }
    }

    private void onRenewFailed(LockException error) {
        listener.onRenewalFailed(grant.name(), grant.token(), error);
        if (!GrantEngine.isTransient(error)) {
            lose("renewal failed: " + error.getMessage());
            return;
        }
        long retry = Math.max(TimeUnit.MILLISECONDS.toNanos(5),
                Math.min(TimeUnit.SECONDS.toNanos(1), options.renewalInterval().toNanos() / 8));
        synchronized (this) {
            long at = clock.nanoTime() + retry;
            if (state == ACTIVE && at < validUntil) {
                scheduleRenewal(at);
            }
        }
    }

    void lose(String reason) {
        synchronized (this) {
            if (state != ACTIVE) {
                return;
            }
            state = LOST;
            lossReason = reason;
            stopTimers();
        }
        engine.forget(this);
        if (listener.active()) {
            listener.onLost(grant.name(), grant.token(), reason, held());
        }
        lostSink.tryEmitEmpty();
        endSink.tryEmitEmpty();
        completeUpdates();
        engine.releaseDetached(grant.name(), grant.owner(), options, true);
    }

    /** Idempotent, owner-checked release; later subscriptions complete at once. */
    @Override
    public Mono<Void> release() {
        return Mono.defer(() -> {
            synchronized (this) {
                if (state != ACTIVE) {
                    return Mono.empty();
                }
                state = RELEASED;
                stopTimers();
            }
            endSink.tryEmitEmpty();
            engine.forget(this);
            if (listener.active()) {
                listener.onReleased(grant.name(), grant.token(), held());
            }
            completeUpdates();
            return engine.releaseOnStore(grant.name(), grant.owner(), options);
        });
    }

    @Override
    public Mono<Void> releaseAfterWork() {
        return release().onErrorResume(e -> {
            engine.releaseUnconfirmed();
            listener.onReleaseUnconfirmed(grant.name(), grant.token(), e);
            LOG.warn("{} '{}': the store did not confirm the release after the work ended ({}); the grant expires by itself",
                    engine.concept(), grant.name(), e.getMessage());
            return Mono.empty();
        });
    }

    // guarded by this
    private void stopTimers() {
        for (Disposable d : new Disposable[] {deadlineTimer, renewalTimer, renewalCall}) {
            if (d != null) {
                d.dispose();
            }
        }
        deadlineTimer = null;
        renewalTimer = null;
        renewalCall = null;
    }

    private void emit(Lease lease) {
        updates.emitNext(lease, Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100)));
    }

    private void completeUpdates() {
        updates.emitComplete(Sinks.EmitFailureHandler.busyLooping(Duration.ofMillis(100)));
    }

    @Override
    public String toString() {
        return "Grant{" + grant.name() + ", token " + grant.token() + "}";
    }
}
