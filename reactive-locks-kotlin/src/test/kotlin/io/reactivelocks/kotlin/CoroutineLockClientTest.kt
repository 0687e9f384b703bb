package io.reactivelocks.kotlin

import io.reactivelocks.Lease
import io.reactivelocks.LockLostException
import io.reactivelocks.LockState
import io.reactivelocks.LockTimeoutException
import io.reactivelocks.local.LocalLockBackend
import io.reactivelocks.spi.Attempt
import io.reactivelocks.spi.GrantRequest
import java.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.test.advanceTimeBy
import kotlinx.coroutines.test.currentTime
import kotlinx.coroutines.test.runCurrent
import kotlinx.coroutines.test.runTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test

/**
 * [CoroutineLockClient] on the in-memory store, on the virtual time of `runTest`: the engine's
 * timers run on a Reactor scheduler over the test's coroutine scheduler ([TestScopeScheduler]).
 */
class CoroutineLockClientTest {

    private fun locksTest(body: suspend TestScope.(LocalLocks, CoroutineLockClient, CoroutineLockClient) -> Unit) =
        runTest(timeout = 20.seconds) {
            val locks = LocalLocks(this)
            val a = locks.client()
            val b = locks.client()
            try {
                body(locks, a, b)
            } finally {
                a.close()
                b.close()
            }
        }

    /** A holder that crashed: its grant stays on the store, nobody renews it. */
    private fun crashedHolder(locks: LocalLocks, name: String, ttl: Duration): Long {
        val attempt = LocalLockBackend(locks.store)
            .tryGrant(GrantRequest(name, "crashed", ttl, false, locks.scheduler.clock))
            .block(Duration.ofSeconds(5))
        return (attempt as Attempt.Granted).token()
    }

    @Test
    fun withLockRunsTheBodyUnderTheLockAndReleasesOnReturn() = locksTest { locks, a, b ->
        val result = a.withLock("w") { lease ->
            assertThat(lease.isValid).isTrue()
            assertThat(b.tryAcquire("w")).`as`("another client while the body runs").isNull()
            delay(2_000) // virtual: the lease is renewed meanwhile
            assertThat(lease.isValid).isTrue()
            "done:" + lease.token()
        }
        assertThat(result).startsWith("done:")
        assertThat(locks.store.heldCount()).isZero()
        assertThat(a.metrics.heldLeaseCount()).isZero()
    }

    @Test
    fun withLockReleasesWhenTheBodyThrowsAndRethrows() = locksTest { locks, a, _ ->
        val error = runCatching { a.withLock<Unit>("t") { throw IllegalStateException("boom") } }.exceptionOrNull()
        assertThat(error).isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
        assertThat(locks.store.heldCount()).isZero()
    }

    @Test
    fun withLockReturnsNullFromANullableBody() = locksTest { locks, a, _ ->
        val result: String? = a.withLock("n") { null }
        assertThat(result).isNull()
        assertThat(locks.store.heldCount()).isZero()
    }

    @Test
    fun withLockWaitsForACrashedHoldersTtlOnVirtualTime() = locksTest { locks, a, _ ->
        val crashedToken = crashedHolder(locks, "c", Duration.ofSeconds(10))
        val start = currentTime
        val token = a.withLock("c") { lease -> lease.token() }
        assertThat(currentTime - start).`as`("virtual ms waited").isBetween(10_000L, 11_000L)
        assertThat(token).isGreaterThan(crashedToken)
    }

    @Test
    fun cancellingTheCallerWhileTheBodyRunsCancelsTheBodyAndReleases() = locksTest { locks, a, b ->
        val bodyCancelled = CompletableDeferred<Throwable>()
        val started = CompletableDeferred<Unit>()
        val caller = launch {
            a.withLock("x") {
                started.complete(Unit)
                try {
                    awaitCancellation()
                } catch (e: CancellationException) {
                    bodyCancelled.complete(e)
                    throw e
                }
            }
        }
        started.await()
        assertThat(locks.store.heldCount()).isEqualTo(1)
        caller.cancelAndJoin()
        // withLock returned only after its body ended
        assertThat(bodyCancelled.isCompleted).isTrue()
        assertThat(causes(bodyCancelled.await())).`as`("a cancel by the caller is no loss")
            .noneMatch { it is LockLostException }
        runCurrent()
        assertThat(locks.store.heldCount()).isZero()
        assertThat(a.metrics.heldLeaseCount()).isZero()
        assertThat(b.tryAcquire("x")).isNotNull()
    }

    @Test
    fun cancellingTheCallerWhileItWaitsLeavesNothingBehind() = locksTest { locks, a, b ->
        val held = b.acquire("q")
        val waiter = launch { a.withLock("q") { error("must not run") } }
        advanceTimeBy(2_000)
        assertThat(a.metrics.pendingAcquireCount()).isEqualTo(1)
        waiter.cancelAndJoin()
        runCurrent()
        assertThat(a.metrics.pendingAcquireCount()).isZero()
        held.releaseAndAwait()
        advanceTimeBy(5_000)
        assertThat(locks.store.heldCount()).isZero()
        assertThat(a.metrics.heldLeaseCount()).isZero()
    }

    @Test
    fun losingTheLeaseCancelsTheBodyWithLockLostExceptionAndWithLockThrowsIt() = locksTest { locks, a, b ->
        val seen = CompletableDeferred<Throwable>()
        val lease = CompletableDeferred<Lease>()
        val caller = async {
            runCatching {
                a.withLock("l") { l ->
                    lease.complete(l)
                    try {
                        awaitCancellation()
                    } catch (e: CancellationException) {
                        seen.complete(e)
                        throw e
                    }
                }
            }.exceptionOrNull()
        }
        val l = lease.await()
        // the store loses the grant behind the holder's back; the next renewal finds it gone
        LocalLockBackend(locks.store).release("l", l.owner()).block(Duration.ofSeconds(5))
        val taken = b.acquire("l")
        val error = caller.await()
        assertThat(error).isInstanceOf(LockLostException::class.java)
        assertThat((error as LockLostException).token()).isEqualTo(l.token())
        assertThat(seen.await()).isInstanceOf(CancellationException::class.java)
        assertThat(causes(seen.await()).filterIsInstance<LockLostException>().single())
            .hasMessageContaining("'l'").extracting { it.token() }.isEqualTo(l.token())
        assertThat(currentTime).`as`("lost at the first renewal, after lease/3").isLessThanOrEqualTo(1_100L)
        taken.releaseAndAwait()
    }

    @Test
    fun aNestedWithLockOnTheSameNameReentersThroughTheCoroutineContext() = locksTest { locks, a, b ->
        val tokens = a.withLock("r") { outer ->
            val inner = a.withLock("r") { inner -> inner.token() }
            // a coroutine started in the body carries the context too
            val child = async { a.withLock("r") { it.token() } }.await()
            val another = a.withLock("other") { it.owner() }
            assertThat(another).`as`("another name is another lease").isNotEqualTo(outer.owner())
            listOf(outer.token(), inner, child)
        }
        assertThat(tokens.distinct()).hasSize(1)
        assertThat(locks.store.heldCount()).isZero()
        // an unrelated coroutine does not share the lease: it waits for the release
        val holding = CompletableDeferred<Unit>()
        val release = CompletableDeferred<Unit>()
        val holder = launch { a.withLock("s") { holding.complete(Unit); release.await() } }
        holding.await()
        val other = async { a.withLock("s") { currentTime } }
        advanceTimeBy(3_000)
        assertThat(other.isCompleted).isFalse()
        release.complete(Unit)
        holder.join()
        assertThat(other.await()).isGreaterThanOrEqualTo(3_000L)
        assertThat(b.tryAcquire("s")).isNotNull()
    }

    @Test
    fun acquireTimesOutOnVirtualTime() = locksTest { locks, a, b ->
        val held = b.acquire("t")
        val options = locks.options.mutate().waitTimeout(Duration.ofSeconds(5)).build()
        val start = currentTime
        val error = runCatching { a.acquire("t", options) }.exceptionOrNull()
        assertThat(error).isInstanceOf(LockTimeoutException::class.java)
        assertThat(currentTime - start).isEqualTo(5_000L)
        held.releaseAndAwait()
    }

    @Test
    fun tryAcquireIsNullWhileHeldAndAcquireGrantsAfterRelease() = locksTest { locks, a, b ->
        val lease = a.acquire("p")
        assertThat(b.tryAcquire("p")).isNull()
        val next = async { b.acquire("p") }
        runCurrent()
        assertThat(next.isCompleted).isFalse()
        lease.releaseAndAwait()
        val granted = next.await()
        assertThat(granted.token()).isGreaterThan(lease.token())
        granted.releaseAndAwait()
        assertThat(locks.store.heldCount()).isZero()
    }

    @Test
    fun holdEmitsTheLeaseThenEachRenewalAndReleasesWhenTheCollectorStops() = locksTest { locks, a, _ ->
        val leases = a.hold("h").take(3).toList()
        assertThat(leases.map { it.token() }.distinct()).hasSize(1)
        assertThat(leases.map { it.validUntilNanos() }).isSorted().doesNotHaveDuplicates()
        runCurrent()
        assertThat(locks.store.heldCount()).isZero()
    }

    @Test
    fun observeAndLeaseHelpers() = locksTest { _, a, b ->
        val states = mutableListOf<LockState>()
        val observer = launch { b.observe("o").collect { states += it } }
        runCurrent()
        val lease = a.acquire("o")
        runCurrent()
        lease.updatePayloadAndAwait("node-1")
        runCurrent()
        assertThat(b.inspect("o")).isEqualTo(LockState.Held("o", lease.owner(), lease.token(),
            (b.inspect("o") as LockState.Held).validUntilNanos(), "node-1"))
        lease.releaseAndAwait()
        b.awaitRelease("o")
        runCurrent()
        observer.cancelAndJoin()
        assertThat(states.first()).isEqualTo(LockState.Free("o"))
        assertThat(states.filterIsInstance<LockState.Held>().map { it.payload }).contains(null, "node-1")
        assertThat(states.last()).isEqualTo(LockState.Free("o"))
    }

    @Test
    fun awaitLostReturnsWhenTheLeaseIsLost() = locksTest { locks, a, _ ->
        val lease = a.acquire("al")
        val lost = async { lease.awaitLost(); currentTime }
        LocalLockBackend(locks.store).release("al", lease.owner()).block(Duration.ofSeconds(5))
        assertThat(lost.await()).isLessThanOrEqualTo(1_100L)
        assertThat(lease.isValid).isFalse()
    }

    @Test
    fun withLockManyHoldsTheLockWhileTheFlowRunsAndReenters() = locksTest { locks, a, _ ->
        val out = a.withLockMany("m") { lease ->
            flow {
                emit(lease.token())
                delay(1_500)
                emit(a.withLock("m") { it.token() })
            }
        }.toList()
        assertThat(out).hasSize(2)
        assertThat(out.distinct()).hasSize(1)
        assertThat(locks.store.heldCount()).isZero()
    }

    @Test
    fun badArgumentsFailAtCallTime() = locksTest { _, a, _ ->
        assertThat(runCatching { a.withLock("") { } }.exceptionOrNull())
            .isInstanceOf(IllegalArgumentException::class.java).hasMessageContaining("name")
        assertThat(runCatching { a.hold("") }.exceptionOrNull()).isInstanceOf(IllegalArgumentException::class.java)
        assertThat(runCatching { a.observe("x".repeat(2000)) }.exceptionOrNull())
            .isInstanceOf(IllegalArgumentException::class.java)
    }

    private fun causes(e: Throwable): List<Throwable> = generateSequence(e) { it.cause }.toList()
}
