package io.reactivelocks.kotlin

import io.reactivelocks.Lease
import io.reactivelocks.LockLostException
import io.reactivelocks.multi.MultiLease
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.reactor.asCoroutineContext
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.withContext
import reactor.core.publisher.Mono
import reactor.util.context.ContextView

/**
 * The bridge from a suspending body to the `Mono` a scoped operation of core (`withLock`,
 * `withPermit`, `withLocks`, `process`) runs under its lease. The body runs in a coroutine of its
 * own, on the caller's dispatcher, with the caller's [ReactorContext] extended by the context the
 * engine subscribes with — so a nested `withLock` on the same name inside the body finds the held
 * lease there and reenters. When the engine cancels the body (the lease was lost, or the caller
 * was cancelled) the body's coroutine is cancelled; after a loss its [CancellationException]'s
 * cause is a [LockLostException] naming the lock.
 *
 * One instance serves one call of the scoped operation: [join] waits, without being cancellable,
 * until the body's coroutine and its children have ended, so the operation never returns while
 * its body still runs.
 */
internal class Body<R, T>(
    private val context: CoroutineContext,
    private val block: suspend CoroutineScope.(R) -> T,
    private val lossOf: (R) -> LockLostException?,
) {
    @Volatile
    private var job: Job? = null

    /**
     * The body as the engine wants it: a cold `Mono` that starts the coroutine on subscribe. It
     * is a `Mono<Any>` (Reactor values are never null): a `null` result completes it empty.
     */
    fun mono(resource: R): Mono<Any> = Mono.create { sink ->
        val cancelled = AtomicBoolean()
        val started = CoroutineScope(context + context.withReactorContext(sink.contextView())).launch {
            val value = try {
                // coroutineScope: the value is handed over only once every child of the body ended
                coroutineScope { block(resource) }
            } catch (e: Throwable) {
                // after a cancel from the engine nobody listens any more: the cancellation is not an error
                if (!cancelled.get()) {
                    sink.error(e)
                }
                return@launch
            }
            if (value == null) sink.success() else sink.success(value)
        }
        job = started
        sink.onCancel {
            cancelled.set(true)
            val lost = lossOf(resource)
            started.cancel(if (lost == null) null else CancellationException(lost.message, lost))
        }
    }

    /** Waits until the body's coroutine (if it was started) has ended; not cancellable. */
    suspend fun join() {
        val started = job
        if (started != null && !started.isCompleted) {
            withContext(NonCancellable) { started.join() }
        }
    }

    companion object {
        /** @return the caller's context without its [Job]: the body is a coroutine of its own */
        suspend fun callerContext(): CoroutineContext = currentCoroutineContext().minusKey(Job)
    }
}

/** The caller's [ReactorContext] (if any) with [extensions] put over it. */
private fun CoroutineContext.withReactorContext(extensions: ContextView): ReactorContext {
    val own = this[ReactorContext]?.context
    return (if (own == null) extensions else own.putAll(extensions)).asCoroutineContext()
}

/** @return a [LockLostException] when [lease] is no longer valid (lost, or its deadline passed), else `null` */
internal fun lossOf(lease: Lease): LockLostException? =
    if (lease.isValid) null else LockLostException(lease.name(), lease.token(), "lost while the body ran")

/** @return a [LockLostException] naming the first lease of [set] that is no longer valid, else `null` */
internal fun lossOf(set: MultiLease): LockLostException? =
    set.leases().firstOrNull { !it.isValid }?.let { lossOf(it) }

/** Runs [operation] with a fresh [Body], then waits for the body's coroutine to end. */
internal suspend inline fun <R, T> scoped(
    noinline block: suspend CoroutineScope.(R) -> T,
    noinline lossOf: (R) -> LockLostException?,
    operation: (Body<R, T>) -> Mono<Any>,
): T {
    val body = Body(Body.callerContext(), block, lossOf)
    try {
        @Suppress("UNCHECKED_CAST")
        // awaitSingleOrNull passes the caller's ReactorContext on to the subscription (reentrancy)
        return operation(body).awaitSingleOrNull() as T
    } finally {
        body.join()
    }
}
