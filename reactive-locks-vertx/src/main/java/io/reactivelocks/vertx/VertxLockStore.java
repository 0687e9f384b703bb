package io.reactivelocks.vertx;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link LockStore} session for Vert.x: connect once with the store's entry
 * ({@code RedisLocks.connect(redis)}, {@code PostgresLocks.connect(db)}, ..., {@code LocalLocks.open()}),
 * wrap the session, and ask it for the Vert.x view of every concept. Each view completes its futures
 * and streams on the caller's context (the current one when a method is called, or the one bound
 * with {@link #on(Context)}, which the views handed out keep).
 *
 * <pre>{@code
 * VertxLockStore store = VertxLockStore.create(vertx, RedisLocks.connect(redis));
 * VertxLocks locks = store.locks();
 * VertxTaskQueue tasks = store.taskQueue(LockOptions.defaults());
 * ...
 * store.close();   // closes every concept handed out, then the connections
 * }</pre>
 *
 * <p>Like the session, each method hands out a new concept with its own options; a concept the
 * store does not offer throws {@link io.reactivelocks.ConceptNotOfferedException}, and every method
 * throws {@link IllegalStateException} after {@link #close()}.
 */
public final class VertxLockStore {

    private final LockStore store;
    private final CallerContext context;

    private VertxLockStore(LockStore store, CallerContext context) {
        this.store = store;
        this.context = context;
    }

    /**
     * @param vertx the Vert.x instance whose contexts receive the results
     * @param store the session to use (closed only by {@link #close()})
     * @return the Vert.x view of {@code store}
     * @throws NullPointerException naming the argument when one is null
     */
    public static VertxLockStore create(Vertx vertx, LockStore store) {
        Objects.requireNonNull(store, "store");
        return new VertxLockStore(store, new CallerContext(vertx, null));
    }

    /**
     * @param context the context that receives every result of the returned view and of the
     *                concepts it hands out; it must belong to this object's Vert.x
     * @return a view of the same session bound to {@code context}
     * @throws NullPointerException     naming {@code context} when it is null
     * @throws IllegalArgumentException when {@code context} belongs to another Vert.x instance
     */
    public VertxLockStore on(Context context) {
        return new VertxLockStore(store, this.context.on(context));
    }

    /** @return the session behind this view (for its Reactor API) */
    public LockStore store() {
        return store;
    }

    /** @return the store's name in words, as {@link LockStore#name()} */
    public String name() {
        return store.name();
    }

    /** @return the concepts this store offers, as {@link LockStore#concepts()} */
    public Set<Concept> concepts() {
        return store.concepts();
    }

    /**
     * @param concept a concept
     * @return whether this store offers it, as {@link LockStore#offers(Concept)}
     */
    public boolean offers(Concept concept) {
        return store.offers(concept);
    }

    /** @return a lock client with {@link LockOptions#defaults()}, as {@link LockStore#locks()} */
    public VertxLocks locks() {
        return new VertxLocks(store.locks(), context);
    }

    /**
     * @param options the client's default options
     * @return a lock client (mutex), as {@link LockStore#locks(LockOptions)}
     */
    public VertxLocks locks(LockOptions options) {
        return new VertxLocks(store.locks(options), context);
    }

    /**
     * @param options  the client's default options
     * @param listener told as the client's locks are acquired, renewed, released and lost
     * @return a lock client (mutex) reporting to {@code listener}, as {@link LockStore#locks(LockOptions, io.reactivelocks.LockListener)}
     */
    public VertxLocks locks(LockOptions options, io.reactivelocks.LockListener listener) {
        return new VertxLocks(store.locks(options, listener), context);
    }

    /**
     * @param options the client's default options
     * @return a lock client granting waiters in arrival order, as {@link LockStore#fairLocks(LockOptions)}
     */
    public VertxLocks fairLocks(LockOptions options) {
        return new VertxLocks(store.fairLocks(options), context);
    }

    /**
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return a semaphore, as {@link LockStore#semaphores(LockOptions)}
     */
    public VertxSemaphore semaphores(LockOptions options) {
        return new VertxSemaphore(store.semaphores(options), context);
    }

    /**
     * @param options the grants' timing; writers go first
     * @return a read-write lock, as {@link LockStore#readWriteLocks(LockOptions)}
     */
    public VertxReadWriteLock readWriteLocks(LockOptions options) {
        return new VertxReadWriteLock(store.readWriteLocks(options), context);
    }

    /**
     * @param options the grants' timing and who goes first
     * @return a read-write lock, as {@link LockStore#readWriteLocks(ReadWriteLockOptions)}
     */
    public VertxReadWriteLock readWriteLocks(ReadWriteLockOptions options) {
        return new VertxReadWriteLock(store.readWriteLocks(options), context);
    }

    /**
     * @param options the default options of the locks taken
     * @return a multi-lock, as {@link LockStore#multiLocks(LockOptions)}
     */
    public VertxMultiLock multiLocks(LockOptions options) {
        return new VertxMultiLock(store.multiLocks(options), context);
    }

    /**
     * @param options request timeout, drift allowance and clock of the claims
     * @return a window lock, as {@link LockStore#windowLocks(LockOptions)}
     */
    public VertxWindowLock windowLocks(LockOptions options) {
        return new VertxWindowLock(store.windowLocks(options), context);
    }

    /**
     * @param options timing of campaigns (lease time, renewal, wait timeout)
     * @return leader elections, as {@link LockStore#elections(LockOptions)}
     */
    public VertxLeaderElection elections(LockOptions options) {
        LeaderElection elections = store.elections(options);
        return new VertxLeaderElection(elections, context);
    }

    /** @return the store's admin (what every client holds, force-release), as {@link LockStore#admin()} */
    public VertxAdmin admin() {
        return new VertxAdmin(store.admin(), context);
    }

    /** @return fenced values, as {@link LockStore#fencedValues()} */
    public VertxFencedValues fencedValues() {
        return new VertxFencedValues(store.fencedValues(), context);
    }

    /**
     * @param options claim time (the lease time), renewal, backoff, timeouts
     * @return a task queue, as {@link LockStore#taskQueue(LockOptions)}
     */
    public VertxTaskQueue taskQueue(LockOptions options) {
        return new VertxTaskQueue(store.taskQueue(options), context);
    }

    /**
     * Closes every concept the session handed out (releasing what they hold), then its
     * connections, as {@link LockStore#close()}. Idempotent.
     *
     * @return a future completed on the caller's context when the session is closed
     */
    public Future<Void> close() {
        return context.future(store.close());
    }
}
