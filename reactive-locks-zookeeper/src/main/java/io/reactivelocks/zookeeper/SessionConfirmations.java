package io.reactivelocks.zookeeper;

import io.reactivelocks.LockClock;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.Renewal;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import reactor.core.publisher.Flux;
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

    SessionConfirmations(ZooKeeperLockQueue queue, LockNodes nodes, ZooKeeperLockOptions options, ZooKeeperSession session,
                         BooleanSupplier closed) {
        this.queue = queue;
        this.nodes = nodes;
        this.options = options;
        this.session = session;
        this.closed = closed;
    }

    /**
     * Every confirmation interval (session timeout / 3 unless set), one {@code exists} on the
     * owner's node: while it is there, with our token and our session, each answer is a
     * {@link Renewal} timed from when the request was sent, with the negotiated session timeout.
     * Completes when the node is gone or not ours, and at once on LOST. A confirmation that
     * fails (SUSPENDED) is skipped: the lease runs out on its local deadline unless a later one
     * succeeds first.
     */
    Flux<Renewal> sessionRenewals(HeldLock lease, LockClock clock) {
        return Flux.defer(() -> {
            ZooKeeperLockQueue.Created c = queue.created(lease.name(), lease.owner());
            if (c == null || c.czxid() != lease.token() || closed.getAsBoolean()) {
                return Flux.empty();
            }
            Duration every = confirmationInterval();
            Flux<Confirmation> confirmations = Flux.defer(() -> c.sessionId() != session.sessionId()
                    ? Flux.<Confirmation>empty()
                    : Flux.interval(every, every, options.scheduler())
                            .onBackpressureDrop()
                            .concatMap(t -> confirm(c, clock), 1));
            return confirmations
                    .takeWhile(x -> x.renewal != null)
                    .map(x -> x.renewal)
                    .takeUntilOther(session.lost());
        });
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
