package io.reactivelocks.kotlin

import io.reactivelocks.Lease
import io.reactivelocks.LockOptions
import io.reactivelocks.semaphore.Semaphore
import io.reactivelocks.semaphore.SemaphoreState
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [Semaphore]: at most `permits` holders of a name at once, each permit a
 * [Lease]. Every function delegates to [reactive] and keeps its semantics; `suspend` functions
 * subscribe when called and cancel the subscription when the caller is cancelled (nothing stays
 * held), flows subscribe when collected.
 *
 * ```kotlin
 * val pool = store.semaphores(options).coroutines()   // store = RedisLocks.connect(redis)
 * pool.withPermit("exports", permits = 4) { permit -> runExport(permit.token()) }
 * ```
 *
 * @property reactive the semaphore every call goes to; close it with [close]
 */
public class CoroutineSemaphore(public val reactive: Semaphore) {

    /** The options used by the functions that take none ([Semaphore.options]). */
    public val options: LockOptions get() = reactive.options()

    /**
     * Acquires one permit, waiting as [Semaphore.acquire] does. Always release it
     * ([releaseAndAwait]), or prefer [withPermit].
     *
     * @param name the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the permit's lease
     * @throws io.reactivelocks.LockTimeoutException after the wait timeout
     */
    public suspend fun acquire(name: String, permits: Int, options: LockOptions = this.options): Lease =
        reactive.acquire(name, permits, 1, options).awaitSingle()[0]

    /**
     * Acquires [count] permits at once, all or none, waiting as [Semaphore.acquire] does.
     *
     * @param name the semaphore name
     * @param permits N, the most holders at once
     * @param count how many permits, from 1 to [permits]
     * @param options options for this call
     * @return one lease per permit
     * @throws io.reactivelocks.LockTimeoutException after the wait timeout
     */
    public suspend fun acquire(name: String, permits: Int, count: Int, options: LockOptions = this.options): List<Lease> =
        reactive.acquire(name, permits, count, options).awaitSingle()

    /**
     * One attempt for one permit, no waiting ([Semaphore.tryAcquire]).
     *
     * @param name the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the permit's lease, or `null` when none is free
     */
    public suspend fun tryAcquire(name: String, permits: Int, options: LockOptions = this.options): Lease? =
        reactive.tryAcquire(name, permits, 1, options).awaitSingleOrNull()?.get(0)

    /**
     * One attempt for [count] permits at once, no waiting ([Semaphore.tryAcquire]).
     *
     * @param name the semaphore name
     * @param permits N, the most holders at once
     * @param count how many permits, from 1 to [permits]
     * @param options options for this call
     * @return one lease per permit, or `null` when not enough are free
     */
    public suspend fun tryAcquire(name: String, permits: Int, count: Int, options: LockOptions = this.options): List<Lease>? =
        reactive.tryAcquire(name, permits, count, options).awaitSingleOrNull()

    /**
     * Runs [block] under one permit ([Semaphore.withPermit]), like [CoroutineLockClient.withLock]:
     * released when the block returns or throws and when the caller is cancelled; if the permit is
     * lost, the block's coroutine is cancelled and this function throws
     * [io.reactivelocks.LockLostException]. Returns only once the block's coroutine has ended.
     *
     * @param name the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @param block the work to do while holding the permit
     * @return what [block] returned
     */
    public suspend fun <T> withPermit(
        name: String,
        permits: Int,
        options: LockOptions = this.options,
        block: suspend CoroutineScope.(permit: Lease) -> T,
    ): T = scoped(block, ::lossOf) { body -> reactive.withPermit<Any>(name, permits, options) { permit -> body.mono(permit) } }

    /**
     * Holds one permit as a flow ([Semaphore.hold]): emits its lease, then an updated one after
     * each renewal; completes when the permit is lost. When the collector stops, the permit is
     * released.
     *
     * @param name the semaphore name
     * @param permits N, the most holders at once
     * @param options options for this call
     * @return the hold flow
     */
    public fun hold(name: String, permits: Int, options: LockOptions = this.options): Flow<Lease> =
        reactive.hold(name, permits, options).asFlow()

    /**
     * Reads the permits in use once ([Semaphore.inspect]).
     *
     * @param name the semaphore name
     * @return the current holders
     */
    public suspend fun inspect(name: String): SemaphoreState = reactive.inspect(name).awaitSingle()

    /** The semaphore's live view of permits held here and acquires in progress ([Semaphore.metrics]). */
    public val metrics: io.reactivelocks.LockClientMetrics get() = reactive.metrics()

    /**
     * The permits in use as a flow ([Semaphore.observe]): the current holders, then each change.
     *
     * @param name the semaphore name
     * @return the state flow
     */
    public fun observe(name: String): Flow<SemaphoreState> = reactive.observe(name).asFlow()

    /** Closes the semaphore and its store ([Semaphore.close]). Idempotent. */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }
}

/** @return the coroutine face of this semaphore */
public fun Semaphore.coroutines(): CoroutineSemaphore = CoroutineSemaphore(this)
