package io.reactivelocks.etcd;

import io.etcd.jetcd.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClock;
import io.reactivelocks.spi.Renewal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One etcd lease that every key of an {@link EtcdLockBackend} is attached to, kept alive by one
 * keep-alive round trip every interval, whatever the number of keys.
 *
 * <p><b>Why {@code keepAliveOnce} on our own timer rather than jetcd's {@code keepAlive}
 * stream.</b> A confirmation is only worth something with the time its request was <i>sent</i>:
 * the server restarts the TTL when it receives the request, so the lease lives at least until
 * send time + TTL, and a holder's deadline is counted from there. jetcd's {@code keepAlive}
 * stream sends on its own wall-clock ticks (every 500 ms once TTL/3 has passed since the last
 * answer, several requests in flight when answers are slow) and does not say which request an
 * answer belongs to. Here each cycle is one request, its send time read on every listener's
 * clock just before it goes out, and the cycle's answer is delivered with those times. The timers
 * run on the backend's scheduler, not a private wall-clock thread.
 *
 * <p><b>Loss.</b> The session is lost — once, for good — when etcd says the lease is gone (a
 * keep-alive answered with TTL 0, i.e. expired or revoked), when a keep-alive fails permanently,
 * or when no keep-alive was confirmed for a whole TTL since the last confirmed send time. Every
 * listener's stream then completes at once, the backend forgets the session (later acquires
 * get a new lease), and the lease is revoked, best effort, so that its keys go at once if etcd is
 * still reachable. A confirmation that arrives after the loss is ignored.
 */
final class EtcdSession {

    private static final Logger LOG = Loggers.getLogger(EtcdSession.class);

    final long leaseId;
    final Duration ttl;
    private final Lease leases;
    private final EtcdLockOptions options;
    private final Scheduler scheduler;
    private final LockClock clock;
    private final Duration interval;
    private final Consumer<EtcdSession> onEnd;
    private final Sinks.Empty<Void> ended = Sinks.empty();
    private final Set<Listener> listeners = ConcurrentHashMap.newKeySet();

    // guarded by this
    private boolean over;
    private String endReason;
    private long confirmedAt;
    private Disposable cycleTimer;
    private Disposable deadlineTimer;
    private Disposable inFlight;

    /**
     * @param leaseId   the granted lease
     * @param ttl       the TTL etcd granted
     * @param grantedAt on {@code options.clock()}, when the grant request was sent
     */
    EtcdSession(long leaseId, Duration ttl, long grantedAt, Lease leases, EtcdLockOptions options,
                Consumer<EtcdSession> onEnd) {
        this.leaseId = leaseId;
        this.ttl = ttl;
        this.leases = leases;
        this.options = options;
        this.scheduler = options.scheduler();
        this.clock = options.clock();
        this.interval = options.keepAliveInterval(ttl);
        this.onEnd = onEnd;
        this.confirmedAt = grantedAt;
    }

    /** Starts the keep-alive cycle and the deadline. */
    void start() {
        synchronized (this) {
            if (over) {
                return;
            }
            scheduleDeadline();
            cycleTimer = schedule(this::cycle, interval.toNanos());
        }
    }

    synchronized boolean isOver() {
        return over;
    }

    synchronized String endReason() {
        return endReason;
    }

    /** @return completes when the session ends (lost or closed) */
    Mono<Void> whenOver() {
        return ended.asMono();
    }

    /**
     * @param listenerClock the clock to time-stamp confirmations with
     * @return one {@link Renewal} per keep-alive cycle that started after the subscription,
     *         completing when the session ends; cancel to stop listening
     */
    Flux<Renewal> renewals(LockClock listenerClock) {
        return Flux.create(sink -> {
            Listener l = new Listener(listenerClock, sink);
            listeners.add(l);
            sink.onDispose(() -> listeners.remove(l));
            if (isOver()) {
                listeners.remove(l);
                sink.complete();
            }
        });
    }

    /**
     * One keep-alive outside the cycle, to confirm that the lease is alive now (after a grant).
     *
     * @param requestClock the clock to time-stamp the confirmation with
     * @return the confirmation: send time on {@code requestClock} and the TTL etcd restarted; a
     *         transient {@link LockBackendException} when the lease is gone (the session is then lost)
     */
    Mono<Renewal> confirm(LockClock requestClock) {
        return Mono.defer(() -> {
            long sentAt = requestClock.nanoTime();
            long ownSentAt = clock.nanoTime();
            return keepAliveOnce()
                    .map(granted -> {
                        onConfirmed(ownSentAt);
                        return new Renewal(sentAt, granted);
                    })
                    .onErrorResume(e -> {
                        if (EtcdErrors.isLeaseNotFound(e)) {
                            lose("etcd says the session lease " + Long.toHexString(leaseId) + " is gone");
                            return Mono.error(new LockBackendException(null, "the session lease expired before the"
                                    + " grant was confirmed", e, true));
                        }
                        return Mono.error(e);
                    });
        });
    }

    /**
     * Ends the session because the backend closes: completes the listeners and revokes the lease.
     *
     * @return completes when the revoke was answered or timed out
     */
    Mono<Void> close() {
        return Mono.defer(() -> end("the backend closed") ? revoke() : Mono.empty());
    }

    // ---- the cycle

    private Mono<Duration> keepAliveOnce() {
        // a keep-alive stuck longer than the interval is given up and sent again (within the TTL)
        Duration timeout = options.requestTimeout().compareTo(interval) < 0 ? options.requestTimeout() : interval;
        return Mono.fromFuture(() -> leases.keepAliveOnce(leaseId))
                .timeout(timeout, scheduler)
                .map(r -> Duration.ofSeconds(r.getTTL()));
    }

    private void cycle() {
        long sentAt;
        List<Listener> snapshot;
        long[] sentAts;
        synchronized (this) {
            if (over) {
                return;
            }
            cycleTimer = null;
            snapshot = new ArrayList<>(listeners);
            sentAts = new long[snapshot.size()];
            for (int i = 0; i < sentAts.length; i++) {
                sentAts[i] = snapshot.get(i).clock.nanoTime();
            }
            sentAt = clock.nanoTime();
        }
        Disposable d = keepAliveOnce().subscribe(
                granted -> onCycleAnswer(sentAt, granted, snapshot, sentAts),
                this::onCycleFailed);
        synchronized (this) {
            if (over) {
                d.dispose();
            } else if (!d.isDisposed()) {
                inFlight = d;
            }
        }
    }

    private void onCycleAnswer(long sentAt, Duration granted, List<Listener> snapshot, long[] sentAts) {
        synchronized (this) {
            if (over) {
                return;
            }
            inFlight = null;
        }
        if (!onConfirmed(sentAt)) {
            return;
        }
        for (int i = 0; i < snapshot.size(); i++) {
            Listener l = snapshot.get(i);
            if (listeners.contains(l)) {
                l.sink.next(new Renewal(sentAts[i], granted));
            }
        }
        synchronized (this) {
            if (!over && cycleTimer == null) {
                long delay = Math.max(0, sentAt + interval.toNanos() - clock.nanoTime());
                cycleTimer = schedule(this::cycle, delay);
            }
        }
    }

    private void onCycleFailed(Throwable e) {
        synchronized (this) {
            if (over) {
                return;
            }
            inFlight = null;
        }
        if (EtcdErrors.isLeaseNotFound(e)) {
            lose("etcd says the session lease " + Long.toHexString(leaseId) + " is gone (expired or revoked)");
            return;
        }
        if (!EtcdErrors.isTransient(e)) {
            lose("keep-alive failed: " + e);
            return;
        }
        LOG.debug("keep-alive of etcd lease {} failed, retrying: {}", Long.toHexString(leaseId), e.toString());
        synchronized (this) {
            if (!over && cycleTimer == null) {
                // retry soon; the deadline timer ends the session if no retry gets through in time
                long retry = Math.max(TimeUnit.MILLISECONDS.toNanos(20), Math.min(TimeUnit.SECONDS.toNanos(1), interval.toNanos() / 4));
                cycleTimer = schedule(this::cycle, retry);
            }
        }
    }

    /** @return false when the session is over */
    private boolean onConfirmed(long sentAt) {
        synchronized (this) {
            if (over) {
                return false;
            }
            if (sentAt > confirmedAt) {
                confirmedAt = sentAt;
                scheduleDeadline();
            }
            return true;
        }
    }

    // guarded by this
    private void scheduleDeadline() {
        if (deadlineTimer != null) {
            deadlineTimer.dispose();
        }
        long delay = Math.max(0, confirmedAt + ttl.toNanos() - clock.nanoTime());
        deadlineTimer = schedule(this::onDeadline, delay);
    }

    private void onDeadline() {
        boolean expired;
        synchronized (this) {
            if (over) {
                return;
            }
            expired = clock.nanoTime() >= confirmedAt + ttl.toNanos();
            if (!expired) {
                scheduleDeadline();
            }
        }
        if (expired) {
            lose("no keep-alive of the session lease was confirmed within its TTL (" + ttl + ")");
        }
    }

    // ---- the end

    /** Ends the session as lost and revokes the lease, best effort. */
    void lose(String reason) {
        if (end(reason)) {
            LOG.debug("etcd session lease {} lost: {}", Long.toHexString(leaseId), reason);
            revoke().subscribe();
        }
    }

    /** @return true when this call ended the session */
    private boolean end(String reason) {
        Disposable[] stop;
        synchronized (this) {
            if (over) {
                return false;
            }
            over = true;
            endReason = reason;
            stop = new Disposable[] {cycleTimer, deadlineTimer, inFlight};
            cycleTimer = null;
            deadlineTimer = null;
            inFlight = null;
        }
        for (Disposable d : stop) {
            if (d != null) {
                d.dispose();
            }
        }
        onEnd.accept(this);
        for (Listener l : new ArrayList<>(listeners)) {
            l.sink.complete();
        }
        listeners.clear();
        ended.tryEmitEmpty();
        return true;
    }

    private Mono<Void> revoke() {
        return Mono.fromFuture(() -> leases.revoke(leaseId))
                .timeout(options.requestTimeout(), scheduler)
                .doOnError(e -> LOG.debug("revoke of etcd lease {} failed (it expires by its TTL): {}",
                        Long.toHexString(leaseId), e.toString()))
                .onErrorResume(e -> Mono.empty())
                .then();
    }

    // guarded by this
    private Disposable schedule(Runnable task, long delayNanos) {
        try {
            return scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // no timer can keep this session: end it (elsewhere: we hold the lock) rather than let it go unseen
            reactor.core.scheduler.Schedulers.parallel().schedule(() -> lose("the session scheduler refused a timer"));
            return null;
        }
    }

    @Override
    public String toString() {
        return "EtcdSession{lease " + Long.toHexString(leaseId) + ", ttl " + ttl + "}";
    }

    private static final class Listener {
        final LockClock clock;
        final FluxSink<Renewal> sink;

        Listener(LockClock clock, FluxSink<Renewal> sink) {
            this.clock = clock;
            this.sink = sink;
        }
    }
}
