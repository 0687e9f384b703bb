package io.reactivelocks.etcd;

import io.etcd.jetcd.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The backend's session: at most one live {@link EtcdSession} at a time, granted lazily by the
 * first caller that needs one (one grant shared by concurrent callers) and again after a loss,
 * never after close. It also remembers which session each granted key was put on, so that a
 * renewal, a payload update or a release finds it, and forgets a session's keys when it ends.
 */
final class SessionLeases {

    private final Lease leases;
    private final EtcdLockOptions options;
    /** The session each granted key is on, by held key ({@link EtcdKeys#heldKey}). */
    private final Map<String, EtcdSession> grantedSessions = new ConcurrentHashMap<>();
    private final Object sessionLock = new Object();

    // guarded by sessionLock
    private EtcdSession session;
    private Mono<EtcdSession> granting;
    private boolean closed;

    SessionLeases(Lease leases, EtcdLockOptions options) {
        this.leases = leases;
        this.options = options;
    }

    /**
     * @return the live session when there is one, else null (closed, none yet, or ended): what
     *     {@link #session()} would give at once, without a {@code Mono} around it
     */
    @org.jspecify.annotations.Nullable EtcdSession ready() {
        synchronized (sessionLock) {
            return !closed && session != null && !session.isOver() ? session : null;
        }
    }

    /** @return the live session, granting a lease when there is none (one grant shared by concurrent callers) */
    Mono<EtcdSession> session() {
        return Mono.defer(() -> {
            synchronized (sessionLock) {
                if (closed) {
                    return Mono.error(new LockClientClosedException(null));
                }
                if (session != null && !session.isOver()) {
                    return Mono.just(session);
                }
                Mono<EtcdSession> g = granting;
                if (g == null) {
                    g = grantSession().cache();
                    granting = g;
                    // a grant answered at once completes here, on this thread (the monitor is reentrant),
                    // and its doOnNext clears 'granting': return the local, never the field
                    g.subscribe(null, e -> { });
                }
                return g;
            }
        });
    }

    private Mono<EtcdSession> grantSession() {
        return Mono.defer(() -> {
            long sentAt = options.clock().nanoTime();
            return Mono.fromFuture(() -> leases.grant(options.sessionTtlSeconds()))
                    .timeout(options.requestTimeout(), options.scheduler())
                    .map(r -> new EtcdSession(r.getID(), Duration.ofSeconds(r.getTTL()), sentAt, leases, options,
                            this::onSessionEnded));
        }).doOnNext(s -> {
            boolean revoke;
            synchronized (sessionLock) {
                granting = null;
                revoke = closed;
                if (!closed) {
                    session = s;
                }
            }
            if (revoke) {
                s.close().subscribe();
            } else {
                s.start();
            }
        }).doOnError(e -> {
            synchronized (sessionLock) {
                granting = null;
            }
        }).onErrorMap(e -> EtcdErrors.map(null, "session lease grant", e))
                .flatMap(s -> s.isOver() ? Mono.error(endedAtOnce(s)) : Mono.just(s));
    }

    /**
     * A session over as soon as it was granted: revoked because the backend closed meanwhile, or
     * lost because its grant was answered only after a whole TTL (a partition that healed) — the
     * latter is transient: the next attempt grants a new lease.
     */
    private LockException endedAtOnce(EtcdSession s) {
        synchronized (sessionLock) {
            if (closed) {
                return new LockClientClosedException(null);
            }
        }
        return new LockBackendException(null, "the etcd session lease granted was over at once: " + s.endReason(),
                null, true);
    }

    private void onSessionEnded(EtcdSession s) {
        synchronized (sessionLock) {
            if (session == s) {
                session = null;
            }
        }
        grantedSessions.values().removeIf(x -> x == s);
    }

    /** @return the live session, or null (none granted yet, lost, or closed) */
    @Nullable EtcdSession current() {
        synchronized (sessionLock) {
            return session;
        }
    }

    boolean isClosed() {
        synchronized (sessionLock) {
            return closed;
        }
    }

    /**
     * Closes: no session is granted from now on.
     *
     * @return the session that was live, for the caller to end; null when there was none
     */
    @Nullable EtcdSession close() {
        EtcdSession s;
        synchronized (sessionLock) {
            closed = true;
            s = session;
            session = null;
        }
        return s;
    }

    // ---------------------------------------------------------------- granted keys

    /**
     * Remembers that the key {@code held} was granted on {@code s}, unless {@code s} is over by now.
     *
     * @return false when {@code s} is over: given up (and its lease revoked, deleting the key) while
     *         the grant's confirmation was on its way, so that confirmation proves nothing
     */
    boolean granted(String held, EtcdSession s) {
        grantedSessions.put(held, s);
        if (s.isOver()) {
            grantedSessions.remove(held, s);
            return false;
        }
        return true;
    }

    /** @return the session the key {@code held} was granted on, or null */
    @Nullable EtcdSession grantedOn(String held) {
        return grantedSessions.get(held);
    }

    void forget(String held) {
        grantedSessions.remove(held);
    }
}
