package io.reactivelocks.kotlin

import io.reactivelocks.Concept
import io.reactivelocks.LockOptions
import io.reactivelocks.LockStore
import io.reactivelocks.rwlock.ReadWriteLockOptions
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [LockStore] session: connect once, then ask it for the coroutine form
 * of every concept. Each function hands out the facade over what the session hands out (sharing
 * the session's connections), so `store.locks()` is `store.reactive.locks().coroutines()`.
 *
 * ```kotlin
 * val store = LocalLocks.open().coroutines()          // RedisLocks.connect(redis).coroutines(), ...
 * val locks = store.locks()
 * val rw = store.readWriteLocks()
 * ...
 * store.close()                                      // closes every concept handed out, then the connections
 * ```
 *
 * A concept the store does not offer throws [io.reactivelocks.ConceptNotOfferedException] ([offers]
 * says which it offers); after [close] every function that hands out a concept throws [IllegalStateException].
 *
 * @property reactive the session every call goes to; close it with [close]
 */
public class CoroutineLockStore(public val reactive: LockStore) {

    /** The store's name in words, e.g. `"redis"` ([LockStore.name]). */
    public val name: String get() = reactive.name()

    /** The concepts this store offers ([LockStore.concepts]). */
    public val concepts: Set<Concept> get() = reactive.concepts()

    /**
     * Whether this store offers [concept] ([LockStore.offers]).
     *
     * @param concept a concept
     * @return `true` when asking for it hands it out
     */
    public fun offers(concept: Concept): Boolean = reactive.offers(concept)

    /**
     * A lock client (mutex) over this session's connections ([LockStore.locks]).
     *
     * @param options the client's default options
     * @return the client's coroutine face
     */
    public fun locks(options: LockOptions = LockOptions.defaults()): CoroutineLockClient =
        reactive.locks(options).coroutines()

    /**
     * A lock client (mutex) that reports to a listener ([LockStore.locks]).
     *
     * @param options the client's default options
     * @param listener told as the client's locks are acquired, renewed, released and lost
     * @return the client's coroutine face
     */
    public fun locks(options: LockOptions, listener: io.reactivelocks.LockListener): CoroutineLockClient =
        reactive.locks(options, listener).coroutines()

    /**
     * A lock client whose waiters are granted in arrival order ([LockStore.fairLocks]).
     *
     * @param options the client's default options
     * @return the client's coroutine face
     */
    public fun fairLocks(options: LockOptions = LockOptions.defaults()): CoroutineLockClient =
        reactive.fairLocks(options).coroutines()

    /**
     * A semaphore ([LockStore.semaphores]).
     *
     * @param options the permits' lease time, renewal, waiting and request timeout
     * @return the semaphore's coroutine face
     */
    public fun semaphores(options: LockOptions = LockOptions.defaults()): CoroutineSemaphore =
        reactive.semaphores(options).coroutines()

    /**
     * A writer-preferring read-write lock ([LockStore.readWriteLocks]).
     *
     * @param options the grants' timing
     * @return the lock's coroutine face
     */
    public fun readWriteLocks(options: LockOptions = LockOptions.defaults()): CoroutineReadWriteLock =
        reactive.readWriteLocks(options).coroutines()

    /**
     * A read-write lock with a policy of your choice ([LockStore.readWriteLocks]).
     *
     * @param options the grants' timing and who goes first
     * @return the lock's coroutine face
     */
    public fun readWriteLocks(options: ReadWriteLockOptions): CoroutineReadWriteLock =
        reactive.readWriteLocks(options).coroutines()

    /**
     * A multi-lock over a lock client of this session ([LockStore.multiLocks]).
     *
     * @param options the default options of the locks taken
     * @return the multi-lock's coroutine face
     */
    public fun multiLocks(options: LockOptions = LockOptions.defaults()): CoroutineMultiLock =
        reactive.multiLocks(options).coroutines()

    /**
     * A window lock ([LockStore.windowLocks]).
     *
     * @param options request timeout, drift allowance and clock of the claims
     * @return the window lock's coroutine face
     */
    public fun windowLocks(options: LockOptions = LockOptions.defaults()): CoroutineWindowLock =
        reactive.windowLocks(options).coroutines()

    /**
     * Leader elections over a lock client of this session ([LockStore.elections]).
     *
     * @param options timing of campaigns (lease time, renewal, wait timeout)
     * @return the elections' coroutine face
     */
    public fun elections(options: LockOptions = LockOptions.defaults()): CoroutineLeaderElection =
        reactive.elections(options).coroutines()

    /**
     * The store's admin ([LockStore.admin]): what every client holds, and force-release.
     *
     * @return the coroutine face of the session's admin
     */
    public fun admin(): CoroutineLockAdmin = reactive.admin().coroutines()

    /**
     * Fenced values ([LockStore.fencedValues]).
     *
     * @return their coroutine face
     */
    public fun fencedValues(): CoroutineFencedValues = reactive.fencedValues().coroutines()

    /**
     * A task queue ([LockStore.taskQueue]).
     *
     * @param options claim time (the lease time), renewal, backoff, timeouts
     * @return the queue's coroutine face
     */
    public fun taskQueue(options: LockOptions = LockOptions.defaults()): CoroutineTaskQueue =
        reactive.taskQueue(options).coroutines()

    /**
     * Closes every concept this session handed out (releasing what they hold), then the session's
     * connections, and suspends until done ([LockStore.close]). Idempotent.
     */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }
}

/** @return the coroutine face of this store session: every concept as `suspend` functions and flows */
public fun LockStore.coroutines(): CoroutineLockStore = CoroutineLockStore(this)
