package io.reactivelocks.kotlin

import io.reactivelocks.Concept
import io.reactivelocks.LockState
import io.reactivelocks.fencing.FencedValue
import io.reactivelocks.local.LocalLocks
import io.reactivelocks.rwlock.LockMode
import io.reactivelocks.rwlock.ReadWriteLockOptions
import java.util.concurrent.CopyOnWriteArrayList
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test

/**
 * The coroutine face of a [io.reactivelocks.LockStore] session and of the concepts it added to the
 * facade (read-write lock, fenced values, the multi-lock's stream, `releaseAfterWork`), on the
 * in-memory store: who holds, tokens increasing, release on exit. Every wait is bounded.
 */
class LockStoreCoroutinesTest {

    private val step = 10_000L

    private val store = LocalLocks.open().coroutines()

    @AfterEach
    fun close(): Unit = runBlocking { withTimeout(step) { store.close() } }

    @Test
    fun theSessionNamesItselfAndHandsOutEveryConcept(): Unit = runBlocking {
        withTimeout(step) {
            assertThat(store.name).isEqualTo("in-memory")
            assertThat(store.concepts).containsExactlyInAnyOrder(*Concept.values())
            assertThat(Concept.values()).allMatch(store::offers)
            assertThat(store.locks().options).isNotNull()
            assertThat(store.fairLocks()).isNotNull()
            assertThat(store.semaphores().options).isNotNull()
            assertThat(store.readWriteLocks(ReadWriteLockOptions.defaults().withPreference(ReadWriteLockOptions.Preference.READERS))
                .options.preference()).isEqualTo(ReadWriteLockOptions.Preference.READERS)
            assertThat(store.multiLocks().client.options).isNotNull()
            assertThat(store.windowLocks().options).isNotNull()
            assertThat(store.elections().leader("nobody")).isNull()
            assertThat(store.fencedValues().read("nothing")).isNull()
            assertThat(store.taskQueue().status("q", "t")).isNull()
        }
    }

    @Test
    fun twoClientsOfTheSessionExcludeEachOtherWithIncreasingTokensAndReleaseOnExit(): Unit = runBlocking {
        withTimeout(step) {
            val a = store.locks()
            val b = store.fairLocks()
            val tokens = CopyOnWriteArrayList<Long>()
            a.withLock("report") { lease ->
                tokens += lease.token()
                assertThat(b.tryAcquire("report")).`as`("the other client while a holds").isNull()
                assertThat((a.inspect("report") as LockState.Held).token()).isEqualTo(lease.token())
            }
            assertThat(a.inspect("report")).`as`("released on exit").isInstanceOf(LockState.Free::class.java)
            b.withLock("report") { lease -> tokens += lease.token() }
            val last = a.acquire("report")
            tokens += last.token()
            last.releaseAfterWorkAndAwait()
            assertThat(b.inspect("report")).isInstanceOf(LockState.Free::class.java)
            assertThat(tokens).hasSize(3).isSorted().doesNotHaveDuplicates()
        }
    }

    @Test
    fun readersShareAWriterWaitsForThemAndTokensFenceBoth(): Unit = runBlocking {
        withTimeout(step) {
            val rw = store.readWriteLocks()
            assertThat(rw.read.mode).isEqualTo(LockMode.READ)
            assertThat(rw.write.mode).isEqualTo(LockMode.WRITE)
            val inside = listOf(CompletableDeferred<Long>(), CompletableDeferred<Long>())
            val leave = listOf(CompletableDeferred<Unit>(), CompletableDeferred<Unit>())
            val readers = (0..1).map { i ->
                async {
                    rw.withReadLock("catalog") { lease ->
                        inside[i].complete(lease.token())
                        leave[i].await()
                    }
                }
            }
            val readerTokens = inside.map { it.await() }                  // both readers in at once
            assertThat(readerTokens).doesNotHaveDuplicates()
            assertThat(rw.write.tryAcquire("catalog")).`as`("a writer while readers hold").isNull()
            val writer = async { rw.withWriteLock("catalog") { lease -> lease.token() } }
            // the writer waits (and, writer-preferring, keeps new readers out) until both readers left;
            // registering its intent publishes no change, so the state is read again until it shows
            while (rw.observe("catalog").first().waitingWriters().isEmpty()) {
                yield()
            }
            assertThat(rw.read.tryAcquire("catalog")).`as`("a new reader while a writer waits").isNull()
            leave[0].complete(Unit)
            readers[0].await()
            assertThat(rw.observe("catalog").first().readers()).`as`("one reader still holds").hasSize(1)
            assertThat(writer.isCompleted).isFalse()
            leave[1].complete(Unit)
            readers[1].await()
            val writerToken = writer.await()
            assertThat(writerToken).isGreaterThan(readerTokens.max())
            val after = rw.holdRead("catalog").first()                 // collecting stops: released
            assertThat(after.token()).isGreaterThan(writerToken)
            val state = rw.observe("catalog").first()
            assertThat(state.isFree).`as`("released on exit").isTrue()
        }
    }

    @Test
    fun aNestedRequestForAHeldReadWriteNameFailsInsteadOfDeadlocking(): Unit = runBlocking {
        withTimeout(step) {
            val rw = store.readWriteLocks()
            val nested = runCatching {
                rw.withReadLock("catalog") { rw.withWriteLock("catalog") { "upgraded" } }
            }.exceptionOrNull()
            assertThat(nested).isInstanceOf(IllegalStateException::class.java)
            val held = rw.holdWrite("catalog").first()           // collecting stops: released
            assertThat(held.token()).isPositive()
            assertThat(rw.observe("catalog").first().isFree).isTrue()
        }
    }

    @Test
    fun theAdminListsWhatIsHeldAndForceReleasesIt(): Unit = runBlocking {
        withTimeout(step) {
            val lease = store.locks().acquire("admin:a")
            val admin = store.admin()
            assertThat(admin.list("admin:").toList().map { it.token }).containsExactly(lease.token())
            assertThat(admin.forceRelease("admin:a").map { it.owner }).containsExactly(lease.owner())
            assertThat(admin.list("admin:").toList()).isEmpty()
            val next = store.locks().tryAcquire("admin:a")
            assertThat(next!!.token()).isGreaterThan(lease.token())
            next.releaseAndAwait()
        }
    }

    @Test
    fun fencedValuesAcceptTheNewestTokenAndRefuseOlderOnes(): Unit = runBlocking {
        withTimeout(step) {
            val locks = store.locks()
            val values = store.fencedValues()
            val old = locks.withLock("config") { it.token() }
            val new = locks.withLock("config") { lease -> check(values.write("config", lease.token(), "v2")); lease.token() }
            assertThat(new).isGreaterThan(old)
            assertThat(values.write("config", old, "v1")).`as`("a stale holder's write").isFalse()
            assertThat(values.read("config")).isEqualTo(FencedValue("v2", new))
            assertThat(values.write("config", new, "v2'")).`as`("the same grant writing again").isTrue()
            assertThat(values.delete("config", old)).isFalse()
            assertThat(values.delete("config", new + 1)).isTrue()
            assertThat(values.read("config")).isNull()
            assertThat(values.write("config", new, "back")).`as`("the fence stays after the delete").isFalse()
        }
    }

    @Test
    fun multiLockStreamsWhileHoldingEveryNameAndReleasesThemAfter(): Unit = runBlocking {
        withTimeout(step) {
            val multi = store.multiLocks()
            val other = store.locks()
            val seen = multi.withLocksMany(listOf("account:7", "account:3")) { set ->
                flow {
                    for (name in set.names()) {
                        emit("$name held by another: ${other.tryAcquire(name) != null}")
                    }
                    emit("tokens ${set.leases().all { it.token() > 0 && it.isValid }}")
                }
            }.toList()
            assertThat(seen).containsExactly("account:3 held by another: false", "account:7 held by another: false", "tokens true")
            assertThat(multi.client.inspect("account:7")).isInstanceOf(LockState.Free::class.java)
            assertThat(other.inspect("account:3")).isInstanceOf(LockState.Free::class.java)
        }
    }

    @Test
    fun closingTheSessionReleasesWhatItsConceptsHoldAndRefusesNewOnes(): Unit = runBlocking {
        withTimeout(step) {
            val other = LocalLocks.alongside(store.reactive).coroutines()
            try {
                store.locks().acquire("job")
                store.readWriteLocks().write.acquire("table")
                assertThat(other.locks().tryAcquire("job")).isNull()
                store.close()
                assertThatThrownBy { store.locks() }.isInstanceOf(IllegalStateException::class.java)
                assertThat(other.locks().tryAcquire("job")).`as`("released by the close").isNotNull()
                assertThat(other.readWriteLocks().read.tryAcquire("table")).isNotNull()
            } finally {
                other.close()
            }
        }
    }
}
