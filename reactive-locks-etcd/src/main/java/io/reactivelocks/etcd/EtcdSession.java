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
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
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
 * <p><b>Confirming a grant.</b> A grant is handed out only while the lease is known alive at and
 * after it (etcd issue #11456: a transaction can be served on a lease that already expired but is
 * not revoked yet). Every confirmed keep-alive sent at {@code s} proves the lease alive until at
 * least {@code s + TTL}: etcd refuses to renew an expired lease and restarts the TTL on receipt, so
 * a transaction answered before {@code s + TTL} ran on a live lease, and its key lives as long as
 * the lease. {@link #recentConfirmation} therefore times a grant from the latest confirmation
 * when that one is recent (no request); otherwise {@link #confirm} sends a keep-alive after the
 * grant, shared by every grant that asked before it was sent (one in flight at a time; a grant
 * asking while one is in flight waits for the next).
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
    private static final int MAX_CLOCKS = 8;
    private static final long UNREAD = Long.MIN_VALUE;

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
    /** How old the latest confirmation may be for a grant to be timed from it without a request. */
    private final long recentNanos;

    // guarded by this
    private boolean over;
    private String endReason;
    private long confirmedAt;
    /** The TTL etcd restarted with the latest confirmation (the granted TTL until the first one). */
    private Duration confirmedTtl;
    /** The request clocks grants were timed on (append-only, at most {@link #MAX_CLOCKS}). */
    private LockClock[] grantClocks = new LockClock[0];
    /** {@code confirmedAt}'s send time read on each of {@link #grantClocks}, {@link #UNREAD} when not read then. */
    private long[] confirmedOn = new long[0];
    /** Grant confirmations waiting for a keep-alive not sent yet. */
    private List<Confirmation> waiting = new ArrayList<>();
    /** The grant confirmations of the one confirming keep-alive in flight, or null. */
    private List<Confirmation> confirming;
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
        this.confirmedTtl = ttl;
        this.recentNanos = Math.min(interval.toNanos(), ttl.toNanos() / 2);
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
     *         completing when the session ends; cancel to stop listening. A subscriber that has not
     *         asked for the next renewal gets the latest when it does (a later confirmation supersedes
     *         an earlier one): no buffer is made per held lock
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
        }, FluxSink.OverflowStrategy.LATEST);
    }

    /**
     * The latest confirmation, when it is recent enough to time a grant answered now from it
     * without a request (see the class javadoc): its send time read on {@code requestClock}.
     *
     * @param requestClock the clock to time-stamp the confirmation with
     * @return the confirmation, or null: none recent, the session is over, or {@code requestClock}
     *         was not read at that send (it is from now on, up to a few clocks)
     */
    synchronized @Nullable Renewal recentConfirmation(LockClock requestClock) {
        if (over) {
            return null;
        }
        int i = clockIndex(requestClock);
        if (i < 0 || i >= confirmedOn.length || confirmedOn[i] == UNREAD
                || clock.nanoTime() - confirmedAt > recentNanos) {
            return null;
        }
        return new Renewal(confirmedOn[i], confirmedTtl);
    }

    /**
     * Confirms that the lease is alive after this call (after a grant): with the next keep-alive
     * sent — at once when none is in flight, else once the one in flight answered — shared by every
     * confirmation asked before it goes out. Cancelling stops waiting (the keep-alive still goes).
     *
     * @param requestClock the clock to time-stamp the confirmation with
     * @return the confirmation: send time on {@code requestClock} and the TTL etcd restarted; a
     *         transient {@link LockBackendException} when the lease is gone or the session ended
     */
    Mono<Renewal> confirm(LockClock requestClock) {
        return Mono.create(sink -> {
            Confirmation c = new Confirmation(requestClock, sink);
            boolean send;
            String ended;
            synchronized (this) {
                ended = over ? endReason : null;
                if (ended == null) {
                    waiting.add(c);
                }
                send = confirming == null;
            }
            if (ended != null) {
                sink.error(sessionEnded(ended, null));
                return;
            }
            sink.onCancel(() -> {
                synchronized (this) {
                    waiting.remove(c);
                }
            });
            if (send) {
                sendConfirmation();
            }
        });
    }

    private void sendConfirmation() {
        List<Confirmation> batch;
        long[] theirs;
        Sent sent;
        synchronized (this) {
            if (over || confirming != null || waiting.isEmpty()) {
                return;
            }
            batch = waiting;
            waiting = new ArrayList<>();
            confirming = batch;
            theirs = new long[batch.size()];
            for (int i = 0; i < theirs.length; i++) {
                theirs[i] = batch.get(i).clock.nanoTime();
            }
            sent = stamp();
        }
        keepAliveOnce().subscribe(
                granted -> onConfirmationAnswer(batch, theirs, sent, granted),
                e -> onConfirmationFailed(batch, e));
    }

    private void onConfirmationAnswer(List<Confirmation> batch, long[] theirs, Sent sent, Duration granted) {
        boolean live = onConfirmed(sent, granted);
        synchronized (this) {
            if (confirming == batch) {
                confirming = null;
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            if (live) {
                batch.get(i).sink.success(new Renewal(theirs[i], granted));
            } else {
                batch.get(i).sink.error(sessionEnded(endReason(), null));
            }
        }
        sendConfirmation();
    }

    private void onConfirmationFailed(List<Confirmation> batch, Throwable e) {
        synchronized (this) {
            if (confirming == batch) {
                confirming = null;
            }
        }
        if (EtcdErrors.isLeaseNotFound(e)) {
            lose("etcd says the session lease " + Long.toHexString(leaseId) + " is gone");
            for (Confirmation c : batch) {
                c.sink.error(new LockBackendException(null, "the session lease expired before the grant was confirmed",
                        e, true));
            }
            return;
        }
        for (Confirmation c : batch) {
            c.sink.error(e);
        }
        sendConfirmation();
    }

    private static LockBackendException sessionEnded(String reason, @Nullable Throwable cause) {
        return new LockBackendException(null, "the etcd session ended before the grant was confirmed: " + reason,
                cause, true);
    }

    // guarded by this; registers the clock when new and there is room
    private int clockIndex(LockClock c) {
        for (int i = 0; i < grantClocks.length; i++) {
            if (grantClocks[i] == c) {
                return i;
            }
        }
        if (grantClocks.length < MAX_CLOCKS) {
            LockClock[] more = java.util.Arrays.copyOf(grantClocks, grantClocks.length + 1);
            more[grantClocks.length] = c;
            grantClocks = more;
        }
        return -1;
    }

    /** guarded by this: the send time of a keep-alive about to go out, on the session's and every grant clock. */
    private Sent stamp() {
        long[] on = new long[grantClocks.length];
        for (int i = 0; i < on.length; i++) {
            on[i] = grantClocks[i].nanoTime();
        }
        return new Sent(clock.nanoTime(), on);
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
        Sent sentAt;
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
            sentAt = stamp();
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

    private void onCycleAnswer(Sent sentAt, Duration granted, List<Listener> snapshot, long[] sentAts) {
        synchronized (this) {
            if (over) {
                return;
            }
            inFlight = null;
        }
        if (!onConfirmed(sentAt, granted)) {
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
                long delay = Math.max(0, sentAt.at + interval.toNanos() - clock.nanoTime());
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
    private boolean onConfirmed(Sent sent, Duration granted) {
        synchronized (this) {
            if (over) {
                return false;
            }
            if (sent.at > confirmedAt) {
                confirmedAt = sent.at;
                confirmedTtl = granted;
                long[] on = new long[grantClocks.length];
                java.util.Arrays.fill(on, UNREAD);
                System.arraycopy(sent.onClocks, 0, on, 0, sent.onClocks.length);
                confirmedOn = on;
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
        List<Confirmation> unconfirmed = new ArrayList<>();
        synchronized (this) {
            if (over) {
                return false;
            }
            over = true;
            endReason = reason;
            unconfirmed.addAll(waiting);
            waiting.clear();
            if (confirming != null) {
                unconfirmed.addAll(confirming);
            }
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
        for (Confirmation c : unconfirmed) {
            c.sink.error(sessionEnded(reason, null));
        }
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

    /** A keep-alive's send time on the session's clock and on each grant clock known then. */
    private record Sent(long at, long[] onClocks) {
    }

    /** A grant waiting for a keep-alive sent after it asked. */
    private static final class Confirmation {
        final LockClock clock;
        final MonoSink<Renewal> sink;

        Confirmation(LockClock clock, MonoSink<Renewal> sink) {
            this.clock = clock;
            this.sink = sink;
        }
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
