package io.reactivelocks.kotlin

import io.reactivelocks.LockException
import io.reactivelocks.LockLostException
import io.reactivelocks.LockOptions
import io.reactivelocks.election.Leader
import io.reactivelocks.election.LeaderElection
import io.reactivelocks.election.Leadership
import io.reactivelocks.local.LocalLockBackend
import io.reactivelocks.local.LocalSemaphoreStore
import io.reactivelocks.local.LocalTaskStore
import io.reactivelocks.local.LocalWindowStore
import io.reactivelocks.multi.MultiLease
import io.reactivelocks.multi.MultiLock
import io.reactivelocks.semaphore.Semaphore
import io.reactivelocks.task.TaskQueue
import io.reactivelocks.task.TaskState
import io.reactivelocks.window.WindowLock
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.async
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.advanceTimeBy
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/** The coroutine faces of the concepts beyond the mutex, on the in-memory stores and virtual time. */
class ConceptsTest {

    private fun virtualTest(body: suspend TestScope.(TestScopeScheduler, LockOptions) -> Unit) =
        runTest(timeout = 20.seconds) {
            val scheduler = TestScopeScheduler(this)
            val options = LockOptions.builder().leaseTime(Duration.ofSeconds(3))
                .scheduler(scheduler).clock(scheduler.clock).build()
            body(scheduler, options)
        }

    @Test
    fun semaphoreWithPermitLetsAtMostNHoldersInAndTryAcquireIsNullWhenFull() = virtualTest { scheduler, options ->
        val store = LocalSemaphoreStore(scheduler, scheduler.clock)
        val pool = Semaphore.create(store, options).coroutines()
        try {
            val inside = AtomicInteger()
            val maxInside = AtomicInteger()
            (1..6).map {
                launch {
                    pool.withPermit("pool", 2) { permit ->
                        assertThat(permit.isValid).isTrue()
                        maxInside.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
                        delay(1_000)
                        inside.decrementAndGet()
                    }
                }
            }.joinAll()
            assertThat(maxInside.get()).isEqualTo(2)
            assertThat(currentTime).`as`("three rounds of two").isBetween(3_000L, 3_500L)
            val both = pool.acquire("pool", 2, 2)
            assertThat(both).hasSize(2)
            assertThat(pool.tryAcquire("pool", 2)).isNull()
            // a waiter cancelled while waiting takes nothing
            val waiter = launch { pool.acquire("pool", 2) }
            advanceTimeBy(1_000)
            waiter.cancelAndJoin()
            both.forEach { it.releaseAndAwait() }
            runCurrent()
            assertThat(store.heldCount("pool")).isZero()
            val one = pool.tryAcquire("pool", 2)
            assertThat(one).isNotNull()
            one!!.releaseAndAwait()
        } finally {
            pool.close()
        }
    }

    @Test
    fun electionCampaignsAsAFlowAndObserversSeeLeadersAndNobody() = virtualTest { _, _ ->
        val locks = LocalLocks(this)
        val a = locks.client()
        val b = locks.client()
        try {
            val elections = LeaderElection.create(a.reactive).coroutines()
            val watching = LeaderElection.create(b.reactive).coroutines()
            val seen = mutableListOf<Leader?>()
            val observer = launch { watching.observe("e").collect { seen += it } }
            runCurrent()
            assertThat(seen).containsExactly(null)
            val terms = mutableListOf<Leadership>()
            val campaign = launch { elections.campaign("e", "node-a").collect { terms += it } }
            runCurrent()
            val term = terms.single()
            assertThat(watching.leader("e")).isEqualTo(Leader("e", "node-a", term.owner(), term.token()))
            term.proclaimAndAwait("node-a2")
            runCurrent()
            assertThat(seen.last()).isEqualTo(Leader("e", "node-a2", term.owner(), term.token()))
            advanceTimeBy(1_100)
            assertThat(terms).`as`("the term again after a renewal").hasSizeGreaterThan(1)
                .allMatch { it.token() == term.token() }
            term.resignAndAwait()
            campaign.join() // the campaign completes on resign
            runCurrent()
            assertThat(seen.last()).isNull()
            assertThat(watching.leader("e")).isNull()
            observer.cancelAndJoin()
        } finally {
            a.close()
            b.close()
        }
    }

    @Test
    fun windowLockClaimsOncePerWindow() = virtualTest { scheduler, options ->
        val hourly = WindowLock.create(LocalWindowStore(scheduler), options).coroutines()
        try {
            val first = hourly.tryClaim("report", Duration.ofHours(1))
            assertThat(first).isNotNull()
            assertThat(hourly.tryClaim("report", Duration.ofHours(1))).isNull()
            advanceTimeBy(Duration.ofHours(1).toMillis())
            val next = hourly.tryClaim("report", Duration.ofHours(1))!!
            assertThat(next.window()).isEqualTo(first!!.window() + 1)
            assertThat(next.token()).isGreaterThan(first.token())
        } finally {
            hourly.close()
        }
    }

    @Test
    fun taskQueueCapturesOnDemandAndProcessCompletesOrFails() = virtualTest { scheduler, options ->
        val tasks = TaskQueue.create(LocalTaskStore(scheduler.clock), options).coroutines()
        try {
            assertThat(tasks.register("emails", "t1", 1, "to:ann")).isTrue()
            assertThat(tasks.register("emails", "t1", 1)).isFalse()
            assertThat(tasks.registerAll("emails", listOf("t2", "t3"), 0)).isEqualTo(2)
            // a collector busy with its first claim captures nothing more
            val busy = launch { tasks.capture("emails").collect { awaitCancellation() } }
            runCurrent()
            assertThat(listOf("t1", "t2", "t3").map { tasks.status("emails", it)!!.state() })
                .containsOnlyOnce(TaskState.IN_PROGRESS)
            busy.cancelAndJoin()
            advanceTimeBy(3_500) // the busy collector's claim expires; its task is capturable again
            val payloads = mutableListOf<String?>()
            val worker = launch {
                tasks.capture("emails").collect { claim ->
                    runCatching {
                        tasks.process(claim) { c ->
                            if (c.taskId() == "t3") throw IllegalStateException("boom")
                            delay(100)
                            payloads += c.payload()
                        }
                    }
                }
            }
            advanceTimeBy(2_000)
            worker.cancelAndJoin()
            assertThat(tasks.status("emails", "t1")!!.state()).isEqualTo(TaskState.DONE)
            assertThat(tasks.status("emails", "t2")!!.state()).isEqualTo(TaskState.DONE)
            assertThat(tasks.status("emails", "t3")!!.state()).isEqualTo(TaskState.DEAD)
            assertThat(payloads).containsExactlyInAnyOrder("to:ann", null)
            assertThat(tasks.tryCapture("emails", 10)).isEmpty()
            assertThat(tasks.status("emails", "nope")).isNull()
            assertThat(tasks.remove("emails", "t3")).isTrue()
        } finally {
            tasks.close()
        }
    }

    @Test
    fun multiLockTakesTheSetReentersAndALossCancelsTheBody() = virtualTest { _, _ ->
        val locks = LocalLocks(this)
        val a = locks.client()
        val b = locks.client()
        try {
            val multi = MultiLock.create(a.reactive).coroutines()
            val others = MultiLock.create(b.reactive).coroutines()
            val tokens = multi.withLocks(listOf("y", "x", "x")) { set ->
                assertThat(set.names()).containsExactly("x", "y")
                assertThat(others.tryAcquire(listOf("x"))).isNull()
                // reentrant with the client's withLock in the same coroutine chain
                assertThat(a.withLock("x") { it.token() }).isEqualTo(set.token("x"))
                set.token("x") to set.token("y")
            }
            assertThat(tokens.first).isPositive()
            assertThat(locks.store.heldCount()).isZero()

            val held = others.acquire(listOf("x", "y"))
            assertThat(multi.tryAcquire(listOf("y", "z"))).isNull()
            held.releaseAndAwait()

            val set = CompletableDeferred<MultiLease>()
            val outcome = async {
                runCatching { multi.withLocks(listOf("p", "q")) { s -> set.complete(s); awaitCancellation() } }
                    .exceptionOrNull()
            }
            val s = set.await()
            LocalLockBackend(locks.store).release("q", s.lease("q").owner()).block(Duration.ofSeconds(5))
            val error = outcome.await()
            assertThat(error).isInstanceOf(LockLostException::class.java)
            assertThat((error as LockException).lockName()).isEqualTo("q")
            runCurrent()
            assertThat(locks.store.heldCount()).`as`("the other lease of the set is released").isZero()
        } finally {
            a.close()
            b.close()
        }
    }
}
