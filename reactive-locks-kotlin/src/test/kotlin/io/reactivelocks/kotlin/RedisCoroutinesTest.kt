package io.reactivelocks.kotlin

import io.lettuce.core.RedisClient
import io.lettuce.core.RedisURI
import io.lettuce.core.ScanArgs
import io.lettuce.core.ScanIterator
import io.reactivelocks.LockLostException
import io.reactivelocks.LockOptions
import io.reactivelocks.LockStore
import io.reactivelocks.redis.RedisLockOptions
import io.reactivelocks.redis.RedisLocks
import io.reactivelocks.test.server.RedisServer
import java.time.Duration
import java.util.Collections
import java.util.UUID
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test

/** The coroutine lock client against a real redis-server: exclusion, cancel, loss, reentrancy. */
class RedisCoroutinesTest {

    private val clients = mutableListOf<CoroutineLockClient>()
    private val sessions = mutableListOf<LockStore>()

    /** A client (one simulated process: a session of its own) with short leases: renewed every ~670 ms. */
    private fun locks(): CoroutineLockClient {
        val options = LockOptions.builder().leaseTime(Duration.ofSeconds(2)).build()
        val session = RedisLocks.connect(redis, RedisLockOptions.builder().keyPrefix(prefix).uri(uri).build())
        sessions += session
        return session.locks(options).coroutines().also { clients += it }
    }

    private fun test(body: suspend CoroutineScope.() -> Unit) = runBlocking { withTimeout(20.seconds) { body() } }

    @AfterEach
    fun closeClientsAndCheckNothingIsLeft() = runBlocking {
        clients.forEach { it.close() }
        sessions.forEach { it.close().block(Duration.ofSeconds(10)) }
        assertThat(lockKeys()).`as`("lock keys left on the server").isEmpty()
    }

    @Test
    fun coroutinesOfTwoClientsNeverOverlapAndTokensIncrease() = test {
        val name = "excl-" + UUID.randomUUID()
        val inside = AtomicInteger()
        val maxInside = AtomicInteger()
        val tokens = Collections.synchronizedList(mutableListOf<Long>())
        val a = locks()
        val b = locks()
        (0 until 6).map { i ->
            async(Dispatchers.Default) {
                repeat(2) {
                    (if (i % 2 == 0) a else b).withLock(name) { lease ->
                        maxInside.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
                        tokens += lease.token()
                        delay(2)
                        inside.decrementAndGet()
                    }
                }
            }
        }.awaitAll()
        assertThat(maxInside.get()).isEqualTo(1)
        assertThat(tokens).hasSize(12).isSorted().doesNotHaveDuplicates()
    }

    @Test
    fun cancellingTheBodyReleasesTheLockOnTheServer() = test {
        val a = locks()
        val started = CompletableDeferred<Unit>()
        val caller = launch { a.withLock("cancel-body") { started.complete(Unit); awaitCancellation() } }
        started.await()
        assertThat(lockKeys()).hasSize(1)
        caller.cancelAndJoin()
        awaitNoLockKeys()
        assertThat(a.tryAcquire("cancel-body")?.also { it.releaseAndAwait() }).isNotNull()
    }

    @Test
    fun cancelsRacingInFlightRequestsLeaveNothingOnTheServer() = test {
        val a = locks()
        val b = locks()
        val random = Random(42)
        (0 until 20).map { i ->
            val wait = random.nextLong(0, 8)
            async(Dispatchers.Default) {
                withTimeoutOrNull(wait.milliseconds) {
                    (if (i % 2 == 0) a else b).withLock("race-" + i % 4) { delay(20) }
                }
            }
        }.awaitAll()
        awaitNoLockKeys()
        for (c in listOf(a, b)) {
            await().atMost(Duration.ofSeconds(5)).until { c.metrics.heldLeaseCount() == 0 && c.metrics.pendingAcquireCount() == 0 }
        }
    }

    @Test
    fun losingTheLeaseCancelsTheBodyAndWithLockThrowsLockLostException() = test {
        val a = locks()
        val seen = CompletableDeferred<Throwable>()
        val error = runCatching {
            a.withLock("loss") { lease ->
                // the key goes away behind the holder's back: the next renewal finds it gone
                deleteLockKeys()
                try {
                    awaitCancellation()
                } catch (e: CancellationException) {
                    seen.complete(e)
                    throw e
                }
            }
        }.exceptionOrNull()
        assertThat(error).isInstanceOf(LockLostException::class.java)
        assertThat(generateSequence(seen.await()) { it.cause }.toList()).anyMatch { it is LockLostException }
    }

    @Test
    fun aNestedWithLockReentersWithTheSameLease() = test {
        val a = locks()
        val b = locks()
        val tokens = a.withLock("reenter") { outer ->
            val inner = async(Dispatchers.Default) { a.withLock("reenter") { it.token() } }.await()
            assertThat(lockKeys()).hasSize(1)
            assertThat(b.tryAcquire("reenter")).isNull()
            outer.token() to inner
        }
        assertThat(tokens.first).isEqualTo(tokens.second)
        awaitNoLockKeys()
    }

    private fun awaitNoLockKeys() {
        await().atMost(Duration.ofSeconds(5)).until { lockKeys().isEmpty() }
    }

    companion object {
        private lateinit var server: RedisServer
        private lateinit var redis: RedisClient
        private lateinit var uri: RedisURI
        private val prefix = "rlkt:" + UUID.randomUUID().toString().substring(0, 8) + ":"

        @BeforeAll
        @JvmStatic
        fun startServer() {
            server = RedisServer.start()
            uri = RedisURI.create(server.url())
            redis = RedisClient.create(uri)
        }

        @AfterAll
        @JvmStatic
        fun stopServer() {
            try {
                redis.shutdown(Duration.ZERO, Duration.ofSeconds(2))
            } finally {
                server.close()
            }
        }

        /** @return the lock keys under this class's prefix, read with SCAN on a plain connection */
        private fun lockKeys(): List<String> = redis.connect(uri).use { c ->
            val keys = mutableListOf<String>()
            ScanIterator.scan(c.sync(), ScanArgs.Builder.matches("$prefix*").limit(500)).forEachRemaining(keys::add)
            keys.filter { it.endsWith(":lock") }
        }

        private fun deleteLockKeys() {
            val keys = lockKeys()
            redis.connect(uri).use { c -> c.sync().del(*keys.toTypedArray()) }
        }
    }
}
