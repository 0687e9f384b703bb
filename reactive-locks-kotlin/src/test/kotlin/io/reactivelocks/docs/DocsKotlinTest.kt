package io.reactivelocks.docs

import io.reactivelocks.Lease
import io.reactivelocks.LockState
import io.reactivelocks.election.LeaderElection
import io.reactivelocks.fencing.FencedValue
import io.reactivelocks.kotlin.coroutines
import io.reactivelocks.kotlin.releaseAndAwait
import io.reactivelocks.local.LocalLockBackend
import io.reactivelocks.local.LocalLocks
import io.reactivelocks.local.LocalSemaphoreStore
import io.reactivelocks.local.LocalTaskStore
import io.reactivelocks.local.LocalWindowStore
import io.reactivelocks.multi.MultiLock
import io.reactivelocks.semaphore.Semaphore
import io.reactivelocks.task.TaskQueue
import io.reactivelocks.task.TaskState
import io.reactivelocks.window.WindowClaim
import io.reactivelocks.window.WindowLock
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test

/** The samples of docs/kotlin.md (and the README's Kotlin quick start), run on the in-memory stores. */
class DocsKotlinTest {

    private val step = 10_000L

    private val locks = LocalLockBackend.client().coroutines()

    private val counters = Counters()
    private val sent = CopyOnWriteArrayList<String>()

    @AfterEach
    fun close(): Unit = runBlocking { withTimeout(step) { locks.close() } }

    data class Ticket(val event: String, val number: Long, val fence: Long)

    /** A store of counters whose every call suspends, as a database client's would. */
    class Counters {
        private val values = ConcurrentHashMap<String, Long>()
        suspend fun last(event: String): Long = values.getOrDefault(event, 0L).also { yield() }
        suspend fun store(event: String, value: Long, fence: Long) {
            delay(1)
            values[event] = value
        }
    }

    @Test
    fun withLockNumbersTicketsOneAtATime(): Unit = runBlocking {
        withTimeout(step) {
            // tag::quick-start[]
            val tickets = LocalLockBackend.client().coroutines()   // any LockClient: store.locks().coroutines(), ...

            suspend fun issue(event: String): Ticket =
                tickets.withLock("tickets:$event") { lease ->       // a suspend block, on the caller's dispatcher
                    val next = counters.last(event) + 1             // suspend calls under the lock
                    counters.store(event, next, fence = lease.token())
                    Ticket(event, next, lease.token())
                }
            // end::quick-start[]
            val numbers = (1..20).map { async { issue("concert") } }.awaitAll().map { it.number }
            assertThat(numbers).containsExactlyInAnyOrderElementsOf((1L..20L).toList())
            tickets.close()
        }
    }

    @Test
    fun theOtherVerbs(): Unit = runBlocking {
        withTimeout(step) {
            // tag::verbs[]
            val report = locks.tryAcquire("report")?.let { lease ->  // null when someone else holds it
                try { buildReport(lease.token()) } finally { lease.releaseAndAwait() }
            }
            val held: Flow<Lease> = locks.hold("scheduler")         // the lease, again after each renewal; ends when lost
            val states: Flow<LockState> = locks.observe("scheduler")   // Free / Held(owner, token, payload), then each change
            // end::verbs[]
            assertThat(report).startsWith("report with fence ")
            val lease = held.first()                                // collecting stops: the lock is released
            assertThat(lease.token()).isPositive()
            assertThat(states.first()).isInstanceOf(LockState.Free::class.java)
        }
    }

    @Test
    fun theOtherConcepts(): Unit = runBlocking {
        withTimeout(step) {
            // tag::concepts[]
            val exports = Semaphore.create(LocalSemaphoreStore()).coroutines()   // store.semaphores(options).coroutines(), ...
            val exported = exports.withPermit("exports", permits = 4) { permit -> runExport(permit.token()) }

            val hourly = WindowLock.create(LocalWindowStore()).coroutines()
            val claim: WindowClaim? = hourly.tryClaim("report", Duration.ofHours(1))   // null: taken this hour

            val multi = MultiLock.create(locks.reactive).coroutines()
            val moved = multi.withLocks(listOf("account:7", "account:3")) { set -> transfer(set.token("account:7"), set.token("account:3")) }

            val tasks = TaskQueue.create(LocalTaskStore()).coroutines()
            tasks.register("emails", "welcome:42", retries = 3, payload = "ann@example.com")
            tasks.capture("emails").take(1).collect { claim -> tasks.process(claim) { c -> send(c.payload(), c.token()) } }

            val elections = LeaderElection.create(locks.reactive).coroutines()
            val terms = elections.campaign("scheduler", "node-1:8080").take(1).toList()   // collecting stops: resigns
            // end::concepts[]
            assertThat(exported).startsWith("export with fence ")
            assertThat(claim).isNotNull
            assertThat(hourly.tryClaim("report", Duration.ofHours(1))).isNull()
            assertThat(moved).startsWith("moved with fences ")
            assertThat(tasks.status("emails", "welcome:42")!!.state()).isEqualTo(TaskState.DONE)
            assertThat(sent).containsExactly("ann@example.com")
            assertThat(terms.single().value()).isEqualTo("node-1:8080")
            assertThat(elections.leader("scheduler")).isNull()
            exports.close()
            hourly.close()
            tasks.close()
        }
    }

    @Test
    fun theStoreSession(): Unit = runBlocking {
        withTimeout(step) {
            // tag::session[]
            val store = LocalLocks.open().coroutines()          // RedisLocks.connect(redis).coroutines(), PostgresLocks.connect(db)...
            val locks = store.locks()                            // every concept of the session shares its connections
            val fair = store.fairLocks()                         // waiters granted in arrival order
            val catalog = store.readWriteLocks()
            val values = store.fencedValues()

            val entries = catalog.withReadLock("catalog") { readCatalog() }              // many readers at once
            val written = catalog.withWriteLock("catalog") { lease ->                   // one writer, readers kept out
                values.write("catalog", lease.token(), "v2")     // false when a newer grant's token wrote first
            }
            val current: FencedValue? = values.read("catalog")   // the value and its fence, null when none
            store.close()                                        // closes every concept handed out, then the connections
            // end::session[]
            assertThat(entries).containsExactly("book")
            assertThat(written).isTrue()
            assertThat(current!!.value()).isEqualTo("v2")
            assertThat(locks.options).isNotNull()
            assertThat(fair.options).isNotNull()
        }
    }

    @Test
    fun reentrancyThroughTheCoroutineContext(): Unit = runBlocking {
        withTimeout(step) {
            // tag::reentrancy[]
            val same = locks.withLock("account:7") { outer ->
                coroutineScope {                                    // a coroutine started in the block reenters too
                    async { locks.withLock("account:7") { inner -> inner.token() == outer.token() } }.await()
                }
            }
            // end::reentrancy[]
            assertThat(same).isTrue()
        }
    }

    private suspend fun readCatalog(): List<String> = listOf("book").also { yield() }

    private suspend fun buildReport(token: Long): String = "report with fence $token".also { yield() }

    private suspend fun runExport(token: Long): String = "export with fence $token".also { delay(1) }

    private suspend fun transfer(from: Long, to: Long): String = "moved with fences $from, $to".also { yield() }

    private suspend fun send(to: String?, token: Long): String {
        yield()
        sent.add(to!!)
        return "sent with fence $token"
    }
}
