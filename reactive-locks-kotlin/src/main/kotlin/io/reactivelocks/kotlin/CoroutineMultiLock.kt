package io.reactivelocks.kotlin

import io.reactivelocks.LockOptions
import io.reactivelocks.multi.MultiLease
import io.reactivelocks.multi.MultiLock
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.asFlux
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [MultiLock]: a set of lock names taken all or nothing, in one canonical
 * order. Every function delegates to [reactive] and keeps its semantics.
 *
 * ```kotlin
 * val multi = MultiLock.create(locks).coroutines()
 * multi.withLocks(listOf("account:7", "account:3")) { set ->
 *     transfer(7, 3, set.token("account:7"), set.token("account:3"))
 * }
 * ```
 *
 * @property reactive the multi-lock every call goes to (it holds nothing of its own)
 */
public class CoroutineMultiLock(public val reactive: MultiLock) {

    /** The options of the client the locks are taken with. */
    public val options: LockOptions get() = reactive.client().options()

    /** The coroutine face of the client the locks are taken with ([MultiLock.client]). */
    public val client: CoroutineLockClient get() = reactive.client().coroutines()

    /**
     * Acquires every name, waiting for each ([MultiLock.acquire]). Cancelling half-way releases
     * what was taken. Always release the set ([releaseAndAwait]), or prefer [withLocks].
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the granted set
     * @throws io.reactivelocks.LockTimeoutException when the wait timeout for the whole set ends
     */
    public suspend fun acquire(names: Collection<String>, options: LockOptions = this.options): MultiLease =
        reactive.acquire(names, options).awaitSingle()

    /**
     * All or nothing without waiting ([MultiLock.tryAcquire]).
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the set, or `null` when a name is held by someone else
     */
    public suspend fun tryAcquire(names: Collection<String>, options: LockOptions = this.options): MultiLease? =
        reactive.tryAcquire(names, options).awaitSingleOrNull()

    /**
     * Runs [block] under every lock ([MultiLock.withLocks]), like [CoroutineLockClient.withLock]:
     * released when the block returns or throws and when the caller is cancelled; if a lease is
     * lost, the block's coroutine is cancelled and this function throws
     * [io.reactivelocks.LockLostException] naming that lock. Reentrant like `withLock`.
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param options options for every lease taken (ignored for reentered names)
     * @param block the work to do while holding every lock
     * @return what [block] returned
     */
    public suspend fun <T> withLocks(
        names: Collection<String>,
        options: LockOptions = this.options,
        block: suspend CoroutineScope.(set: MultiLease) -> T,
    ): T = scoped(block, ::lossOf) { body -> reactive.withLocks<Any>(names, options) { set -> body.mono(set) } }

    /**
     * Streaming variant of [withLocks] ([MultiLock.withLocksMany]): when collected, acquires every
     * name and emits what [block]'s flow emits, holding the set until that flow completes or the
     * collector stops; a loss cancels the flow and ends this one with
     * [io.reactivelocks.LockLostException] naming that lock.
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param options options for every lease taken
     * @param block makes the flow to run while holding every lock
     * @return the elements of [block]'s flow
     */
    public fun <T : Any> withLocksMany(
        names: Collection<String>,
        options: LockOptions = this.options,
        block: (set: MultiLease) -> Flow<T>,
    ): Flow<T> = reactive.withLocksMany(names, options) { set -> block(set).asFlux() }.asFlow()

    /**
     * Holds the set as a flow ([MultiLock.hold]): emits it once, completes when any lease is lost.
     * When the collector stops, every lease is released.
     *
     * @param names the lock names, in any order; duplicates are collapsed
     * @param options options for every lease of the set
     * @return the hold flow
     */
    public fun hold(names: Collection<String>, options: LockOptions = this.options): Flow<MultiLease> =
        reactive.hold(names, options).asFlow()
}

/** @return the coroutine face of this multi-lock */
public fun MultiLock.coroutines(): CoroutineMultiLock = CoroutineMultiLock(this)
