package io.reactivelocks.kotlin

import io.reactivelocks.Lease
import io.reactivelocks.LockOptions
import io.reactivelocks.rwlock.LockMode
import io.reactivelocks.rwlock.ReadWriteLock
import io.reactivelocks.rwlock.ReadWriteLockOptions
import io.reactivelocks.rwlock.ReadWriteState
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [ReadWriteLock]: per name, any number of readers or one writer, each
 * grant a [Lease] with a fencing token. Every function delegates to [reactive] and keeps its
 * semantics (writer-preferring unless the options say otherwise; no upgrade; not reentrant — a
 * nested request for the same name from within a block fails at once with [IllegalStateException]).
 *
 * ```kotlin
 * val rw = LocalLocks.open().coroutines().readWriteLocks()
 * val catalog = rw.withReadLock("catalog") { lease -> readCatalog() }          // many readers at once
 * rw.withWriteLock("catalog") { lease -> rewriteCatalog(lease.token()) }      // alone
 * ```
 *
 * @property reactive the lock every call goes to; close it with [close]
 */
public class CoroutineReadWriteLock(public val reactive: ReadWriteLock) {

    /** The options: the timing used by the functions that take none, and who goes first ([ReadWriteLock.options]). */
    public val options: ReadWriteLockOptions get() = reactive.options()

    /** The shared side: read grants ([ReadWriteLock.read]). */
    public val read: Access = Access(reactive.read())

    /** The exclusive side: write grants ([ReadWriteLock.write]). */
    public val write: Access = Access(reactive.write())

    /**
     * Runs [block] under a read grant ([ReadWriteLock.withReadLock]); see [Access.withLock].
     *
     * @param name the lock name
     * @param options options for this call
     * @param block the work; it receives the grant's lease
     * @return what [block] returned
     * @throws io.reactivelocks.LockLostException when the grant was lost while the block ran
     * @throws io.reactivelocks.LockTimeoutException after the wait timeout
     */
    public suspend fun <T> withReadLock(
        name: String,
        options: LockOptions = read.options,
        block: suspend CoroutineScope.(lease: Lease) -> T,
    ): T = read.withLock(name, options, block)

    /**
     * Runs [block] under the write grant ([ReadWriteLock.withWriteLock]); see [Access.withLock].
     *
     * @param name the lock name
     * @param options options for this call
     * @param block the work; it receives the grant's lease
     * @return what [block] returned
     * @throws io.reactivelocks.LockLostException when the grant was lost while the block ran
     * @throws io.reactivelocks.LockTimeoutException after the wait timeout
     */
    public suspend fun <T> withWriteLock(
        name: String,
        options: LockOptions = write.options,
        block: suspend CoroutineScope.(lease: Lease) -> T,
    ): T = write.withLock(name, options, block)

    /**
     * Holds a read grant as a flow ([ReadWriteLock.holdRead]); see [Access.hold].
     *
     * @param name the lock name
     * @param options options for this call
     * @return the hold flow
     */
    public fun holdRead(name: String, options: LockOptions = read.options): Flow<Lease> = read.hold(name, options)

    /**
     * Holds the write grant as a flow ([ReadWriteLock.holdWrite]); see [Access.hold].
     *
     * @param name the lock name
     * @param options options for this call
     * @return the hold flow
     */
    public fun holdWrite(name: String, options: LockOptions = write.options): Flow<Lease> = write.hold(name, options)

    /**
     * Reads the readers, the writer and the waiting writers once ([ReadWriteLock.inspect]).
     *
     * @param name the lock name
     * @return the current state
     */
    public suspend fun inspect(name: String): ReadWriteState = reactive.inspect(name).awaitSingle()

    /** The lock's live view of grants held here and acquires in progress ([ReadWriteLock.metrics]). */
    public val metrics: io.reactivelocks.LockClientMetrics get() = reactive.metrics()

    /**
     * The state of a name as a flow ([ReadWriteLock.observe]): first the current readers, writer
     * and waiting writers, then each change (renewals are not changes). Ends when the collector
     * stops or the lock closes.
     *
     * @param name the lock name
     * @return the state flow
     */
    public fun observe(name: String): Flow<ReadWriteState> = reactive.observe(name).asFlow()

    /**
     * Closes the lock ([ReadWriteLock.close]): pending acquires fail, held grants are released,
     * observe flows complete, the store is closed. Idempotent.
     */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }

    /**
     * One side of the lock, read or write ([ReadWriteLock.Access]), as `suspend` functions and flows.
     *
     * @property reactive the side every call goes to
     */
    public class Access(public val reactive: ReadWriteLock.Access) {

        /** Which side this is ([ReadWriteLock.Access.mode]). */
        public val mode: LockMode get() = reactive.mode()

        /** The lock's timing used by the functions that take none ([ReadWriteLock.Access.options]). */
        public val options: LockOptions get() = reactive.options()

        /**
         * Acquires a grant of this side, waiting until granted, the wait timeout or cancellation
         * ([ReadWriteLock.Access.acquire]). Always release it ([releaseAndAwait]), or prefer [withLock].
         *
         * @param name the lock name
         * @param options options for this call
         * @return the grant's lease
         * @throws io.reactivelocks.LockTimeoutException after the wait timeout
         * @throws IllegalStateException when called from within a block holding the same name
         */
        public suspend fun acquire(name: String, options: LockOptions = this.options): Lease =
            reactive.acquire(name, options).awaitSingle()

        /**
         * One attempt, no waiting ([ReadWriteLock.Access.tryAcquire]); a writer's refused attempt leaves no intent.
         *
         * @param name the lock name
         * @param options options for this call
         * @return the lease, or `null` when the lock is taken
         */
        public suspend fun tryAcquire(name: String, options: LockOptions = this.options): Lease? =
            reactive.tryAcquire(name, options).awaitSingleOrNull()

        /**
         * Runs [block] under a grant of this side ([ReadWriteLock.Access.withLock]), like
         * [CoroutineLockClient.withLock]: released when the block returns or throws and when the
         * caller is cancelled; if the grant is lost, the block's coroutine is cancelled and this
         * function throws [io.reactivelocks.LockLostException]. Returns only once the block's
         * coroutine has ended. Not reentrant: inside the block, a request for the same name fails
         * with [IllegalStateException].
         *
         * @param name the lock name
         * @param options options for this call
         * @param block the work; it receives the grant's lease
         * @return what [block] returned
         */
        public suspend fun <T> withLock(
            name: String,
            options: LockOptions = this.options,
            block: suspend CoroutineScope.(lease: Lease) -> T,
        ): T = scoped(block, ::lossOf) { body -> reactive.withLock<Any>(name, options) { lease -> body.mono(lease) } }

        /**
         * Holds a grant as a flow ([ReadWriteLock.Access.hold]): emits the lease, then an updated
         * one after each confirmed renewal; completes when the grant is lost. When the collector
         * stops, the grant is released.
         *
         * @param name the lock name
         * @param options options for this call
         * @return the hold flow
         */
        public fun hold(name: String, options: LockOptions = this.options): Flow<Lease> =
            reactive.hold(name, options).asFlow()
    }
}

/** @return the coroutine face of this read-write lock */
public fun ReadWriteLock.coroutines(): CoroutineReadWriteLock = CoroutineReadWriteLock(this)
