package io.reactivelocks;

import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.multi.MultiLock;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.window.WindowLock;
import java.util.Set;
import reactor.core.publisher.Mono;

/**
 * A session with one store: connect once (each store module's entry, e.g.
 * {@code RedisLocks.connect(redis)}, {@code PostgresLocks.connect(db)}, {@code EtcdLocks.connect(etcd)},
 * {@code ZooKeeperLocks.connect(curator)}, {@code LocalLocks.open()}), then ask it for every concept
 * you use. Every concept handed out by one session shares the session's one connection set (Redis:
 * one command and one pub/sub connection; PostgreSQL: the pool and one LISTEN connection; etcd: the
 * client's channel; ZooKeeper: the client's session) — none opens connections of its own.
 *
 * <pre>{@code
 * LockStore store = RedisLocks.connect(redis);
 * LockClient locks = store.locks();
 * Semaphore permits = store.semaphores(LockOptions.defaults());
 * ...
 * store.close().block();   // closes every concept handed out, then the connections, once
 * }</pre>
 *
 * <p>Each method that hands a concept out returns a new object with its own options (closing it
 * releases what it holds and leaves the session open); {@link #close()} closes all of them and then
 * the connections. A concept the store does not offer throws {@link ConceptNotOfferedException}
 * naming store and concept; {@link #concepts()} says which it offers. After close every such method
 * throws {@link IllegalStateException} naming the store.
 */
public interface LockStore {

    /** @return the store's name in words, e.g. {@code "redis"} or {@code "postgresql"} */
    String name();

    /** @return the concepts this store offers; the others throw {@link ConceptNotOfferedException} */
    Set<Concept> concepts();

    /**
     * @param concept a concept
     * @return whether this store offers it
     */
    default boolean offers(Concept concept) {
        return concepts().contains(concept);
    }

    /** @return a lock client with {@link LockOptions#defaults()} */
    default LockClient locks() {
        return locks(LockOptions.defaults());
    }

    /**
     * @param options the client's default options
     * @return a lock client (mutex) over this session's connections
     */
    LockClient locks(LockOptions options);

    /**
     * @param options  the client's default options
     * @param listener told as the client's locks are acquired, renewed, released and lost (meters,
     *                 tracing, health counts)
     * @return a lock client (mutex) over this session's connections, reporting to {@code listener}
     */
    LockClient locks(LockOptions options, LockListener listener);

    /**
     * @param options the client's default options
     * @return a lock client whose waiters are granted in arrival order (on stores whose plain lock
     *         queues already — etcd, ZooKeeper — the plain lock)
     */
    LockClient fairLocks(LockOptions options);

    /**
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore
     */
    Semaphore semaphores(LockOptions options);

    /**
     * @param options the grants' timing; writers go first
     * @return a read-write lock
     */
    default ReadWriteLock readWriteLocks(LockOptions options) {
        return readWriteLocks(ReadWriteLockOptions.of(options));
    }

    /**
     * @param options the grants' timing and who goes first
     * @return a read-write lock
     */
    ReadWriteLock readWriteLocks(ReadWriteLockOptions options);

    /**
     * @param options the default options of the locks taken
     * @return a multi-lock over a lock client of this session
     */
    MultiLock multiLocks(LockOptions options);

    /**
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock
     */
    WindowLock windowLocks(LockOptions options);

    /**
     * @param options timing of campaigns (lease time, renewal, wait timeout)
     * @return leader elections over a lock client of this session
     */
    LeaderElection elections(LockOptions options);

    /** @return fenced values */
    FencedValues fencedValues();

    /**
     * @param options claim time (the lease time), renewal, backoff, timeouts
     * @return a task queue
     */
    TaskQueue taskQueue(LockOptions options);

    /**
     * The operator's view of the store, across every client of it: what is held under a prefix,
     * and force-release. The same instance on every call; closed with the session.
     *
     * @return the admin over this session's connections
     * @throws IllegalStateException when the session is closed
     */
    LockAdmin admin();

    /**
     * Closes every concept this session handed out (releasing what they hold), then the session's
     * connections (not the application's client it was built over). Idempotent.
     *
     * @return a {@code Mono} that closes on subscribe
     */
    Mono<Void> close();
}
