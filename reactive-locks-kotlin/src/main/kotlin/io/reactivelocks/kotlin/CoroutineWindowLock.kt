package io.reactivelocks.kotlin

import io.reactivelocks.LockOptions
import io.reactivelocks.window.WindowClaim
import io.reactivelocks.window.WindowLock
import java.time.Duration
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [WindowLock]: at most one claim per name and period across the fleet.
 *
 * ```kotlin
 * val hourly = store.windowLocks(options).coroutines()   // store = RedisLocks.connect(redis)
 * hourly.tryClaim("report", Duration.ofHours(1))?.let { claim -> sendReport(claim.window(), claim.token()) }
 * ```
 *
 * @property reactive the window lock every call goes to; close it with [close]
 */
public class CoroutineWindowLock(public val reactive: WindowLock) {

    /** The options this window lock uses ([WindowLock.options]). */
    public val options: LockOptions get() = reactive.options()

    /**
     * Claims the current window of [name] for [period] ([WindowLock.tryClaim]): one store request,
     * never retried. Cancelling does not recall a request already sent.
     *
     * @param name the lock name
     * @param period the window length, a whole number of milliseconds
     * @return the claim when this call was the first of the window, `null` when it was claimed already
     * @throws io.reactivelocks.LockBackendException when the store failed or did not answer in time
     */
    public suspend fun tryClaim(name: String, period: Duration): WindowClaim? =
        reactive.tryClaim(name, period).awaitSingleOrNull()

    /** Closes the store ([WindowLock.close]). Idempotent. */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }
}

/** @return the coroutine face of this window lock */
public fun WindowLock.coroutines(): CoroutineWindowLock = CoroutineWindowLock(this)
