package io.reactivelocks.kotlin

import io.reactivelocks.Lease
import io.reactivelocks.LockClient
import io.reactivelocks.LockClientMetrics
import io.reactivelocks.LockOptions
import io.reactivelocks.LockState
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.asFlux
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [LockClient]: the same locks, the same engine, as `suspend` functions
 * and [Flow]s. Every function delegates to [reactive] and keeps its semantics (see the javadoc of
 * [LockClient]); what changes is only how a result is waited for.
 *
 * - A `suspend` function subscribes when called and resumes with the result; cancelling the
 *   calling coroutine cancels the subscription, which leaves nothing held (a grant that arrives
 *   after the cancel is released by the engine, in the background).
 * - A [Flow] is cold: it subscribes when collected; when the collector stops (completes, throws,
 *   is cancelled) the subscription is cancelled.
 * - Bad arguments throw at call time ([NullPointerException], [IllegalArgumentException] naming
 *   the argument); failures are the [io.reactivelocks.LockException] family.
 *
 * ```kotlin
 * val locks = store.locks().coroutines()   // store = RedisLocks.connect(redis)
 * val total = locks.withLock("invoice:42") { lease ->
 *     invoices.close(42, fence = lease.token())      // suspend calls; cancelled if the lease is lost
 * }
 * ```
 *
 * @property reactive the client every call goes to; close it with [close]
 */
public class CoroutineLockClient(public val reactive: LockClient) {

    /** The options used by the functions that take none ([LockClient.options]). */
    public val options: LockOptions get() = reactive.options()

    /** The client's live view of held leases and acquires in progress ([LockClient.metrics]). */
    public val metrics: LockClientMetrics get() = reactive.metrics()

    /**
     * Acquires the lock, waiting as [LockClient.acquire] does (until granted, the wait timeout of
     * [options], or cancellation). The lease is renewed in the background until released: always
     * release it ([releaseAndAwait]), or prefer [withLock], which releases for you. Not reentrant.
     *
     * @param name the lock name
     * @param options options for this call
     * @return the granted lease
     * @throws io.reactivelocks.LockTimeoutException after the wait timeout
     * @throws io.reactivelocks.LockBackendException when the store fails permanently, or still
     *         fails when the wait timeout ends
     * @throws io.reactivelocks.LockClientClosedException when the client is closed
     */
    public suspend fun acquire(name: String, options: LockOptions = this.options): Lease =
        reactive.acquire(name, options).awaitSingle()

    /**
     * One attempt, no waiting ([LockClient.tryAcquire]): the lease (renewed until released), or
     * `null` when someone else holds the lock. Cancelling releases a grant that arrives late.
     *
     * @param name the lock name
     * @param options options for this call
     * @return the granted lease, or `null` when the lock is held by someone else
     * @throws io.reactivelocks.LockBackendException when the store fails or does not answer
     *         within the request timeout
     */
    public suspend fun tryAcquire(name: String, options: LockOptions = this.options): Lease? =
        reactive.tryAcquire(name, options).awaitSingleOrNull()

    /**
     * Runs [block] under the lock ([LockClient.withLock]): acquires (waiting like [acquire]), runs
     * the block in a coroutine of its own on the caller's dispatcher, and releases when the block
     * returns or throws, and when the caller is cancelled. Returns only once the block's coroutine
     * and its children have ended.
     *
     * If the lease is lost while the block runs, the block's coroutine is cancelled (the cause of
     * its [kotlinx.coroutines.CancellationException] is a [io.reactivelocks.LockLostException])
     * and this function throws the engine's [io.reactivelocks.LockLostException]: the block's
     * work must be treated as not done under the lock.
     *
     * Reentrant through the coroutine context: a nested `withLock` on the same name and client,
     * called from within [block] (or a coroutine started in it), reuses the held lease — the
     * engine's Reactor `Context` travels as a [kotlinx.coroutines.reactor.ReactorContext]. Other
     * coroutines never share a lease.
     *
     * @param name the lock name
     * @param options options for this call (ignored when reentering)
     * @param block the work to do while holding the lock; it receives the lease (for its token)
     * @return what [block] returned
     * @throws io.reactivelocks.LockLostException when the lease was lost while the block ran
     * @throws io.reactivelocks.LockTimeoutException after the wait timeout
     */
    public suspend fun <T> withLock(
        name: String,
        options: LockOptions = this.options,
        block: suspend CoroutineScope.(lease: Lease) -> T,
    ): T = scoped(block, ::lossOf) { body -> reactive.withLock<Any>(name, options) { lease -> body.mono(lease) } }

    /**
     * Streaming variant of [withLock] ([LockClient.withLockMany]): when collected, acquires the
     * lock and emits what [block]'s flow emits, holding the lock until that flow completes or the
     * collector stops; a loss cancels the flow and ends this one with
     * [io.reactivelocks.LockLostException]. Reentrant like [withLock].
     *
     * @param name the lock name
     * @param options options for this call (ignored when reentering)
     * @param block makes the flow to run while holding the lock
     * @return the elements of [block]'s flow
     */
    public fun <T : Any> withLockMany(
        name: String,
        options: LockOptions = this.options,
        block: (lease: Lease) -> Flow<T>,
    ): Flow<T> = reactive.withLockMany(name, options) { lease -> block(lease).asFlux() }.asFlow()

    /**
     * Holds the lock as a flow ([LockClient.hold]): when collected, acquires (waiting like
     * [acquire]), emits the lease and then an updated lease after each confirmed renewal;
     * completes when the lease is lost, before any other client can be granted the lock. When the
     * collector stops, the lock is released.
     *
     * @param name the lock name
     * @param options options for this call
     * @return the hold flow
     */
    public fun hold(name: String, options: LockOptions = this.options): Flow<Lease> =
        reactive.hold(name, options).asFlow()

    /**
     * Reads the lock's state once ([LockClient.inspect]).
     *
     * @param name the lock name
     * @return [LockState.Held] with the holder, or [LockState.Free]
     * @throws io.reactivelocks.LockBackendException when the store cannot be read
     */
    public suspend fun inspect(name: String): LockState = reactive.inspect(name).awaitSingle()

    /**
     * The lock's state as a flow ([LockClient.observe]): first the current state, then each change
     * of holder or payload. Ends when the collector stops or the client closes.
     *
     * @param name the lock name
     * @return the state flow
     */
    public fun observe(name: String): Flow<LockState> = reactive.observe(name).asFlow()

    /**
     * Suspends until the lock is next free — at once if it is free now ([LockClient.awaitRelease]).
     *
     * @param name the lock name
     * @throws io.reactivelocks.LockClientClosedException when the client is (or gets) closed first
     */
    public suspend fun awaitRelease(name: String) {
        reactive.awaitRelease(name).awaitSingleOrNull()
    }

    /**
     * Closes the client ([LockClient.close]): pending acquires fail, held leases are released,
     * observe flows complete, the store is closed. Idempotent.
     */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }
}

/** @return the coroutine face of this client: `suspend` functions and flows over the same engine */
public fun LockClient.coroutines(): CoroutineLockClient = CoroutineLockClient(this)
