package io.reactivelocks.kotlin

import io.reactivelocks.LockClock
import io.reactivelocks.LockOptions
import io.reactivelocks.local.LocalLockBackend
import io.reactivelocks.local.LocalLockStore
import java.time.Duration
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.nanoseconds
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.TestScope
import reactor.core.Disposable
import reactor.core.Disposables
import reactor.core.scheduler.Scheduler

/**
 * A Reactor [Scheduler] on the virtual time of a `runTest` [TestScope]: every task is a
 * coroutine of the scope's `backgroundScope` that `delay`s on the test scheduler. Given to the
 * engine (`LockOptions.scheduler`) and to the in-memory stores, it puts the engine's timers —
 * backoff, renewal, deadlines, the store's expiry — on the same virtual clock as the test's own
 * `delay`, `advanceTimeBy` and `currentTime`: coroutine virtual time drives Reactor time.
 */
class TestScopeScheduler(private val scope: TestScope) : Scheduler {

    /** The engine's monotonic clock: the test scheduler's virtual milliseconds, in nanoseconds. */
    val clock: LockClock = LockClock { scope.testScheduler.currentTime * 1_000_000 }

    override fun now(unit: TimeUnit): Long = unit.convert(scope.testScheduler.currentTime, TimeUnit.MILLISECONDS)

    override fun schedule(task: Runnable): Disposable = schedule(task, 0, TimeUnit.NANOSECONDS)

    override fun schedule(task: Runnable, delay: Long, unit: TimeUnit): Disposable {
        val job = scope.backgroundScope.launch {
            if (delay > 0) {
                delay(unit.toNanos(delay).nanoseconds)
            }
            task.run()
        }
        return object : Disposable {
            override fun dispose() = job.cancel()
            override fun isDisposed(): Boolean = job.isCancelled || job.isCompleted
        }
    }

    override fun createWorker(): Scheduler.Worker = object : Scheduler.Worker {
        private val tasks = Disposables.composite()

        override fun schedule(task: Runnable): Disposable = schedule(task, 0, TimeUnit.NANOSECONDS)

        override fun schedule(task: Runnable, delay: Long, unit: TimeUnit): Disposable {
            val d = this@TestScopeScheduler.schedule(task, delay, unit)
            tasks.add(d)
            return d
        }

        override fun dispose() = tasks.dispose()

        override fun isDisposed(): Boolean = tasks.isDisposed
    }
}

/** The in-memory lock store and options on the virtual time of [scope]. */
class LocalLocks(scope: TestScope, leaseTime: Duration = Duration.ofSeconds(3)) {
    val scheduler = TestScopeScheduler(scope)
    val store = LocalLockStore(scheduler, scheduler.clock)
    val options: LockOptions = LockOptions.builder()
        .leaseTime(leaseTime)
        .scheduler(scheduler)
        .clock(scheduler.clock)
        .build()

    /** @return a new client (one simulated process) over the shared store */
    fun client(): CoroutineLockClient = LocalLockBackend.client(store, options).coroutines()
}
