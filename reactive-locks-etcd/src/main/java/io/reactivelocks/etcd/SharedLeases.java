package io.reactivelocks.etcd;

import io.etcd.jetcd.Lease;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;

/**
 * The leases a store's keys ({@link LeasedKeys}: the semaphore's permits, the read-write lock's
 * requests) are put on: at most one <em>current</em> lease per TTL at a time, shared by every key of
 * that TTL the store puts, as a lock's key sits on the backend's session lease. A grant therefore
 * asks for no lease of its own (it used to: a LeaseGrant before the put and a LeaseRevoke as the
 * release, 3 requests per pair), and one keep-alive renews every key on a lease (it used to be one
 * per permit per tick).
 *
 * <p>A key lives as long as its lease: its holder's renewals keep the lease alive (with every other
 * key on it), a release deletes the key alone (guarded by its create revision), and the keys of a
 * client that died go when its leases run out, one TTL later — as before. A lease is kept alive only
 * by the renewals and waits of the keys on it, and by the grants that take it: once none of its keys
 * is held or waiting it runs out by itself. A lease is <em>retired</em> — no new key is put on it,
 * the next grant of its TTL takes a new one — when etcd says it is gone, and when a key of ours may
 * be left on it that no one holds (a clean-up delete not confirmed yet, which {@link LeasedKeys}
 * retries until it is): such a key then lives at most until the last holder on that lease leaves,
 * and one TTL more.
 *
 * <p>Every method is lazy and never blocks.
 */
final class SharedLeases {

    /** A lease keys of this store are put on. */
    static final class Shared {
        final long id;
        final long ttlSeconds;
        private final AtomicLong refreshedNanos;

        Shared(long id, long ttlSeconds, long refreshedNanos) {
            this.id = id;
            this.ttlSeconds = ttlSeconds;
            this.refreshedNanos = new AtomicLong(refreshedNanos);
        }

        /** @return when the lease was last granted or kept alive (the send time of that request): its TTL runs from there at most */
        long refreshedNanos() {
            return refreshedNanos.get();
        }

        void refreshed(long sentNanos) {
            refreshedNanos.accumulateAndGet(sentNanos, Math::max);
        }

        @Override
        public String toString() {
            return "Shared{" + Long.toHexString(id) + ", " + ttlSeconds + " s}";
        }
    }

    private final Lease leases;
    // guarded by this: the current lease of each TTL, and the grant of one in flight
    private final Map<Long, Shared> current = new HashMap<>();
    private final Map<Long, Mono<Shared>> granting = new HashMap<>();

    SharedLeases(Lease leases) {
        this.leases = leases;
    }

    /** @return whether the lease was granted or kept alive within a third of its TTL (two thirds of it, at least, are left) */
    static boolean fresh(Shared s, long nowNanos) {
        return nowNanos - s.refreshedNanos() < s.ttlSeconds * 1_000_000_000L / 3;
    }

    /**
     * @param ttlSeconds the TTL of the keys to put
     * @return the current lease of that TTL, fresh: kept alive first when a third of its TTL passed
     *         since, granted when there is none or it is gone (one grant shared by concurrent callers)
     */
    Mono<Shared> take(long ttlSeconds) {
        return Mono.defer(() -> {
            Shared s;
            synchronized (this) {
                s = current.get(ttlSeconds);
            }
            if (s == null) {
                return grant(ttlSeconds);
            }
            if (fresh(s, System.nanoTime())) {
                return Mono.just(s);
            }
            return keepAlive(s).flatMap(ttl -> ttl > 0 ? Mono.just(s) : grant(ttlSeconds));
        });
    }

    private Mono<Shared> grant(long ttlSeconds) {
        return Mono.defer(() -> {
            synchronized (this) {
                Shared s = current.get(ttlSeconds);
                if (s != null && fresh(s, System.nanoTime())) {
                    return Mono.just(s);
                }
                Mono<Shared> g = granting.get(ttlSeconds);
                if (g == null) {
                    long sent = System.nanoTime();
                    g = Mono.fromFuture(() -> leases.grant(ttlSeconds))
                            .map(r -> new Shared(r.getID(), ttlSeconds, sent))
                            .doOnNext(n -> {
                                synchronized (this) {
                                    current.put(ttlSeconds, n);
                                    granting.remove(ttlSeconds);
                                }
                            })
                            .doOnError(e -> {
                                synchronized (this) {
                                    granting.remove(ttlSeconds);
                                }
                            })
                            .cache();
                    granting.put(ttlSeconds, g);
                    // a grant answered at once completes here (the monitor is reentrant) and clears 'granting':
                    // return the local, never the field
                    g.subscribe(null, e -> { });
                }
                return g;
            }
        });
    }

    /**
     * @param id         the lease a key of ours was found on (a put whose answer was lost, sent again)
     * @param ttlSeconds the TTL it was put with
     * @return the current lease when it is that one, else that lease, its age unknown (kept alive before it is counted on)
     */
    Shared adopt(long id, long ttlSeconds) {
        synchronized (this) {
            Shared s = current.get(ttlSeconds);
            if (s != null && s.id == id) {
                return s;
            }
        }
        return new Shared(id, ttlSeconds, System.nanoTime() - (1L << 62));
    }

    /** No new key goes on the lease: the next grant of its TTL takes another one. */
    void retire(Shared s) {
        synchronized (this) {
            current.remove(s.ttlSeconds, s);
        }
    }

    /**
     * A {@code keepAliveOnce} of the lease.
     *
     * @return the TTL etcd gave it, {@code <= 0} when it is gone (retired then)
     */
    Mono<Long> keepAlive(Shared s) {
        return Mono.defer(() -> {
            long sent = System.nanoTime();
            return Mono.fromFuture(() -> leases.keepAliveOnce(s.id)).map(r -> r.getTTL())
                    .onErrorResume(EtcdErrors::isLeaseNotFound, e -> Mono.just(0L))
                    .doOnNext(ttl -> {
                        if (ttl > 0) {
                            s.refreshed(sent);
                        } else {
                            retire(s);
                        }
                    });
        });
    }

    /** @return the current lease of the TTL, if any (tests) */
    synchronized Shared current(long ttlSeconds) {
        return current.get(ttlSeconds);
    }
}
