package io.reactivelocks.blocking;

import io.reactivelocks.Concept;
import io.reactivelocks.ConceptNotOfferedException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import java.util.Objects;
import java.util.Set;

/**
 * A session with one store, blocking: wraps a core {@link LockStore} (connect once —
 * {@code RedisLocks.connect(redis)}, {@code PostgresLocks.connect(db)}, {@code LocalLocks.open()}, ...)
 * and hands out the blocking form of every concept, all over the session's one connection set.
 *
 * <pre>{@code
 * try (BlockingStore store = BlockingStore.of(RedisLocks.connect(redis))) {
 *     BlockingLocks locks = store.locks();
 *     BlockingSemaphore permits = store.semaphores(LockOptions.defaults());
 *     ...
 * }   // closes every concept handed out, then the connections
 * }</pre>
 *
 * <p>A concept the store does not offer throws {@link ConceptNotOfferedException} naming store and
 * concept ({@link #concepts()} says which it offers); after {@link #close()} every such method
 * throws {@link IllegalStateException}, as on the core session.
 */
public final class BlockingStore implements AutoCloseable {

    private final LockStore store;

    private BlockingStore(LockStore store) {
        this.store = store;
    }

    /**
     * @param store the core session
     * @return a blocking view of it; closing the view closes the session
     * @throws NullPointerException naming {@code store} when it is null
     */
    public static BlockingStore of(LockStore store) {
        return new BlockingStore(Objects.requireNonNull(store, "store"));
    }

    /** @return the core session underneath */
    public LockStore store() {
        return store;
    }

    /** @return the store's name in words, e.g. {@code "redis"} */
    public String name() {
        return store.name();
    }

    /** @return the concepts this store offers */
    public Set<Concept> concepts() {
        return store.concepts();
    }

    /**
     * @param concept a concept
     * @return whether this store offers it
     */
    public boolean offers(Concept concept) {
        return store.offers(concept);
    }

    /** @return blocking locks over a lock client with {@link LockOptions#defaults()} */
    public BlockingLocks locks() {
        return BlockingLocks.of(store.locks());
    }

    /**
     * @param options the client's default options
     * @return blocking locks over a lock client of this session
     */
    public BlockingLocks locks(LockOptions options) {
        return BlockingLocks.of(store.locks(options));
    }

    /**
     * @param options  the client's default options
     * @param listener told as the client's locks are acquired, renewed, released and lost
     * @return blocking locks over a lock client of this session reporting to {@code listener}
     */
    public BlockingLocks locks(LockOptions options, io.reactivelocks.LockListener listener) {
        return BlockingLocks.of(store.locks(options, listener));
    }

    /**
     * @param options the client's default options
     * @return blocking locks whose waiters are granted in arrival order
     */
    public BlockingLocks fairLocks(LockOptions options) {
        return BlockingLocks.of(store.fairLocks(options));
    }

    /**
     * @param options the permits' timing
     * @return a blocking semaphore
     */
    public BlockingSemaphore semaphores(LockOptions options) {
        return BlockingSemaphore.of(store.semaphores(options));
    }

    /**
     * @param options the grants' timing; writers go first
     * @return a blocking read-write lock
     */
    public BlockingReadWriteLock readWriteLocks(LockOptions options) {
        return BlockingReadWriteLock.of(store.readWriteLocks(options));
    }

    /**
     * @param options the grants' timing and who goes first
     * @return a blocking read-write lock
     */
    public BlockingReadWriteLock readWriteLocks(ReadWriteLockOptions options) {
        return BlockingReadWriteLock.of(store.readWriteLocks(options));
    }

    /**
     * @param options the default options of the locks taken
     * @return a blocking multi-lock
     */
    public BlockingMultiLock multiLocks(LockOptions options) {
        return BlockingMultiLock.of(store.multiLocks(options));
    }

    /**
     * @param options request timeout, drift allowance and clock of the claims
     * @return a blocking window lock
     */
    public BlockingWindowLock windowLocks(LockOptions options) {
        return BlockingWindowLock.of(store.windowLocks(options));
    }

    /**
     * @param options timing of campaigns
     * @return blocking leader elections
     */
    public BlockingLeaderElection elections(LockOptions options) {
        return BlockingLeaderElection.of(store.elections(options));
    }

    /** @return blocking fenced values */
    public BlockingFencedValues fencedValues() {
        return BlockingFencedValues.of(store.fencedValues());
    }

    /**
     * @return a blocking view of the store's admin: what every client holds, and force-release
     * @throws IllegalStateException when the session is closed
     */
    public BlockingAdmin admin() {
        return BlockingAdmin.of(store.admin());
    }

    /**
     * @param options claim time, renewal, backoff, timeouts
     * @return a blocking task queue
     */
    public BlockingTaskQueue taskQueue(LockOptions options) {
        return BlockingTaskQueue.of(store.taskQueue(options));
    }

    /**
     * Closes every concept the session handed out, then its connections (see {@link LockStore#close}).
     * Idempotent; the wait is not interruptible.
     */
    @Override
    public void close() {
        Await.closing(store.close(), "BlockingStore.close");
    }

    /** @return a description naming the store */
    @Override
    public String toString() {
        return "BlockingStore[" + store.name() + "]";
    }
}
