package io.reactivelocks.kotlin

import io.reactivelocks.LockOptions
import io.reactivelocks.task.TaskClaim
import io.reactivelocks.task.TaskQueue
import io.reactivelocks.task.TaskStatus
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [TaskQueue]: tasks registered under a queue name, captured by workers
 * across the fleet, each capture a lease with its own fencing token. Every function delegates to
 * [reactive] and keeps its semantics.
 *
 * ```kotlin
 * val tasks = store.taskQueue(options).coroutines()   // store = RedisLocks.connect(redis)
 * tasks.register("emails", "welcome:42", retries = 3, payload = """{"to":"ann@example.com"}""")
 * tasks.capture("emails").collect { claim ->
 *     tasks.process(claim) { c -> send(c.payload(), c.token()) }   // completed, failed or released for you
 * }
 * ```
 *
 * @property reactive the queue every call goes to; close it with [close]
 */
public class CoroutineTaskQueue(public val reactive: TaskQueue) {

    /** The timing of this queue client ([TaskQueue.options]). */
    public val options: LockOptions get() = reactive.options()

    /**
     * Registers a task as pending ([TaskQueue.register]); a task id the queue knows is left as it is.
     *
     * @param queue the queue name
     * @param taskId the task id
     * @param retries how many failures are retried before the task is dead; at least 0
     * @param payload text handed to the worker with each claim, or `null`
     * @return `true` when the task was new, `false` when the queue had it already
     */
    public suspend fun register(queue: String, taskId: String, retries: Int, payload: String? = null): Boolean =
        reactive.register(queue, taskId, retries, payload).awaitSingle()

    /**
     * Registers many tasks as pending, without payload ([TaskQueue.registerAll]).
     *
     * @param queue the queue name
     * @param taskIds the task ids
     * @param retries how many failures of each are retried; at least 0
     * @return how many tasks were new
     */
    public suspend fun registerAll(queue: String, taskIds: Collection<String>, retries: Int): Int =
        reactive.registerAll(queue, taskIds, retries).awaitSingle()

    /**
     * Captures tasks as they become capturable, as a flow ([TaskQueue.capture]). Demand follows
     * the collector: the flow asks the store for one claim at a time, the next one once the
     * collector took the previous, so it never captures work nobody processes; apply
     * `buffer(n)` to let up to `n` more be captured ahead. It waits while the queue is empty
     * (never completes because of that). When the collector stops, capturing stops and claims of
     * a store call still in flight are released.
     *
     * @param queue the queue name
     * @return the claims
     */
    public fun capture(queue: String): Flow<TaskClaim> =
        reactive.capture(queue).asFlow().buffer(Channel.RENDEZVOUS)

    /**
     * Captures what is capturable now, up to [limit] tasks ([TaskQueue.tryCapture]).
     * Cancelling releases the claims of a store call still in flight; claims already received
     * expire by their claim time.
     *
     * @param queue the queue name
     * @param limit the most tasks to capture, at least 1
     * @return the claims, possibly none
     */
    public suspend fun tryCapture(queue: String, limit: Int): List<TaskClaim> =
        reactive.tryCapture(queue, limit).collectList().awaitSingle()

    /**
     * Extends a claim by the claim time from now ([TaskQueue.renew]).
     *
     * @param claim the claim
     * @return the claim with its new local deadline, or `null` when it expired, was recaptured or ended
     */
    public suspend fun renew(claim: TaskClaim): TaskClaim? = reactive.renew(claim).awaitSingleOrNull()

    /**
     * Keeps a claim alive as a flow ([TaskQueue.hold]): emits the renewed claim after each
     * renewal; completes when the claim is lost. Stopping the collector stops renewing; it does
     * not release.
     *
     * @param claim the claim
     * @return the renewed claims
     */
    public fun hold(claim: TaskClaim): Flow<TaskClaim> = reactive.hold(claim).asFlow()

    /**
     * Marks the task done if the claim still holds it ([TaskQueue.complete]).
     *
     * @param claim the claim
     * @return `true` when the task is now done, `false` when the claim no longer holds it
     */
    public suspend fun complete(claim: TaskClaim): Boolean = reactive.complete(claim).awaitSingle()

    /**
     * Records a failure if the claim still holds the task ([TaskQueue.fail]): one retry less, or dead.
     *
     * @param claim the claim
     * @return `true` when recorded, `false` when the claim no longer holds the task
     */
    public suspend fun fail(claim: TaskClaim): Boolean = reactive.fail(claim).awaitSingle()

    /**
     * Gives the task back if the claim still holds it ([TaskQueue.release]): pending again, no retry used.
     *
     * @param claim the claim
     * @return `true` when released, `false` when the claim no longer held the task
     */
    public suspend fun release(claim: TaskClaim): Boolean = reactive.release(claim).awaitSingle()

    /**
     * Runs [block] under the claim ([TaskQueue.process]): renews the claim while the block runs;
     * completes the task when the block returns, records a failure (one retry used) and rethrows
     * when it throws, releases the task when the caller is cancelled. If the claim is lost, the
     * block's coroutine is cancelled and this function throws [io.reactivelocks.LockLostException]
     * (no retry used). Returns only once the block's coroutine has ended.
     *
     * @param claim the claim, as just captured
     * @param block the work; it receives the claim (for its token and payload)
     * @return what [block] returned, once the task is done
     */
    public suspend fun <T> process(claim: TaskClaim, block: suspend CoroutineScope.(claim: TaskClaim) -> T): T =
        scoped(block, { null }) { body -> reactive.process<Any>(claim) { c -> body.mono(c) } }

    /**
     * Reads one task ([TaskQueue.status]).
     *
     * @param queue the queue name
     * @param taskId the task id
     * @return the task's status, or `null` when the queue does not have it
     */
    public suspend fun status(queue: String, taskId: String): TaskStatus? =
        reactive.status(queue, taskId).awaitSingleOrNull()

    /**
     * Forgets a task in any state ([TaskQueue.remove]).
     *
     * @param queue the queue name
     * @param taskId the task id
     * @return `true` when the queue had the task
     */
    public suspend fun remove(queue: String, taskId: String): Boolean = reactive.remove(queue, taskId).awaitSingle()

    /** Closes the queue and its store ([TaskQueue.close]). Idempotent. */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }
}

/** @return the coroutine face of this task queue */
public fun TaskQueue.coroutines(): CoroutineTaskQueue = CoroutineTaskQueue(this)
