package io.reactivelocks.zookeeper;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.Renewal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.state.ConnectionState;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The lease of a granted owner node is the ZooKeeper session: this confirms, one {@code exists}
 * on the owner's node at a time, that the node is still there with the grant's token on the
 * current session, and turns each confirmation into a {@link Renewal} timed from when it was sent.
 */
final class SessionConfirmations {

    private static final Logger LOG = Loggers.getLogger(SessionConfirmations.class);

    private final ZooKeeperLockQueue queue;
    private final LockNodes nodes;
    private final ZooKeeperLockOptions options;
    private final ZooKeeperSession session;
    private final BooleanSupplier closed;
    private final Set<Held> held = ConcurrentHashMap.newKeySet();
    // guarded by this
    private @Nullable Disposable ticker;

    SessionConfirmations(ZooKeeperLockQueue queue, LockNodes nodes, ZooKeeperLockOptions options, ZooKeeperSession session,
                         BooleanSupplier closed) {
        this.queue = queue;
        this.nodes = nodes;
        this.options = options;
        this.session = session;
        this.closed = closed;
        // one subscription for every held lock (it ends when the session's states complete, on close)
        session.changes().filter(s -> s == ConnectionState.LOST).subscribe(s -> onLost());
    }

    /**
     * Every confirmation interval (session timeout / 3 unless set), one {@code exists} on the
     * owner's node: while it is there, with our token and our session, each answer is a
     * {@link Renewal} timed from when the request was sent, with the negotiated session timeout.
     * Completes when the node is gone or not ours, and at once on LOST. A confirmation that
     * fails (SUSPENDED) is skipped: the lease runs out on its local deadline unless a later one
     * succeeds first. One timer of the backend ticks for every held lock (the first confirmation
     * of a lock comes between half an interval and an interval and a half after its grant, so a
     * short hold sends none), rather than a periodic timer per lock set up and cancelled with every
     * acquire and release.
     */
    Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return Flux.defer(() -> {
            ZooKeeperLockQueue.Created c = queue.created(lease.name(), lease.owner());
            if (c == null || c.czxid() != lease.token() || closed.getAsBoolean() || c.sessionId() != session.sessionId()) {
                return Flux.empty();
            }
            return Flux.<Renewal>create(sink -> {
                Held h = new Held(c, clock, sink);
                held.add(h);
                sink.onDispose(() -> held.remove(h));
                ensureTicking();
            }, FluxSink.OverflowStrategy.LATEST); // a later confirmation supersedes: no buffer per held lock
        });
    }

    /** Cancels the timer (the backend closes; its leases are released). */
    void close() {
        Disposable t;
        synchronized (this) {
            t = ticker;
            ticker = null;
        }
        if (t != null) {
            t.dispose();
        }
    }

    /** Ends every held lock's renewals: the session was lost. */
    private void onLost() {
        for (Held h : new ArrayList<>(held)) {
            held.remove(h);
            h.sink.complete();
        }
    }

    private void ensureTicking() {
        synchronized (this) {
            if (ticker != null || closed.getAsBoolean()) {
                return;
            }
            ticker = schedule(confirmationInterval());
        }
    }

    private void tick() {
        synchronized (this) {
            ticker = null;
            if (held.isEmpty() || closed.getAsBoolean()) {
                return; // the next held lock starts the timer again
            }
        }
        // a lock granted less than half an interval ago waits for the next tick (a short hold sends none):
        // its first confirmation comes between half an interval and an interval and a half after its grant
        long young = confirmationInterval().toNanos() / 2;
        for (Held h : held) {
            if (h.clock.nanoTime() - h.since < young) {
                continue;
            }
            if (h.inFlight.compareAndSet(false, true)) {
                confirm(h.created, h.clock).subscribe(
                        x -> {
                            if (x.renewal != null) {
                                h.sink.next(x.renewal);
                            } else {
                                held.remove(h);
                                h.sink.complete();
                            }
                        },
                        e -> h.inFlight.set(false),
                        () -> h.inFlight.set(false));
            }
        }
        ensureTicking();
    }

    // guarded by this
    private @Nullable Disposable schedule(Duration delay) {
        try {
            return options.scheduler().schedule(this::tick, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null; // the scheduler is gone: the leases run out on their local deadlines
        }
    }

    /** One held lock listening for confirmations. */
    private static final class Held {
        final ZooKeeperLockQueue.Created created;
        final LockClock clock;
        final FluxSink<Renewal> sink;
        final AtomicBoolean inFlight = new AtomicBoolean();
        /** When it joined, on {@link #clock}. */
        final long since;

        Held(ZooKeeperLockQueue.Created created, LockClock clock, FluxSink<Renewal> sink) {
            this.created = created;
            this.clock = clock;
            this.since = clock.nanoTime();
            this.sink = sink;
        }
    }

    private record Confirmation(Renewal renewal) {
        static final Confirmation GONE = new Confirmation(null);
    }

    private Mono<Confirmation> confirm(ZooKeeperLockQueue.Created c, LockClock clock) {
        return Mono.defer(() -> {
            long sentAt = clock.nanoTime();
            return nodes.exists(c.path())
                    .timeout(options.requestTimeout(), options.scheduler())
                    .map(s -> {
                        long ttl = session.negotiatedTimeoutMillis();
                        boolean ours = s.getCzxid() == c.czxid() && s.getEphemeralOwner() == c.sessionId()
                                && c.sessionId() == session.sessionId() && ttl > 0;
                        return ours ? new Confirmation(new Renewal(sentAt, Duration.ofMillis(ttl))) : Confirmation.GONE;
                    })
                    .defaultIfEmpty(Confirmation.GONE)
                    .onErrorResume(e -> {
                        LOG.debug("confirmation of {} failed (skipped): {}", c.path(), e.toString());
                        return Mono.empty();
                    });
        });
    }

    private Duration confirmationInterval() {
        if (options.confirmationInterval() != null) {
            return options.confirmationInterval();
        }
        long t = session.negotiatedTimeoutMillis();
        return Duration.ofMillis(Math.max(50, (t > 0 ? t : 3000) / 3));
    }

    /** Answers whether each owner's node still exists with the lease's token on the current session. */
    Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
        return Flux.fromIterable(batch)
                .concatMap(r -> {
                    ZooKeeperLockQueue.Created c = queue.created(r.lock().name(), r.lock().owner());
                    if (c == null || c.czxid() != r.lock().token()) {
                        return Mono.just(RenewOutcome.notHeld());
                    }
                    return nodes.exists(c.path()).map(s -> {
                        long ttl = session.negotiatedTimeoutMillis();
                        return s.getCzxid() == c.czxid() && s.getEphemeralOwner() == session.sessionId() && ttl > 0
                                ? RenewOutcome.renewed(Duration.ofMillis(ttl)) : RenewOutcome.notHeld();
                    }).defaultIfEmpty(RenewOutcome.notHeld());
                })
                .collectList()
                .onErrorMap(e -> ZooKeeperErrors.map(null, "renewal", e));
    }
}
