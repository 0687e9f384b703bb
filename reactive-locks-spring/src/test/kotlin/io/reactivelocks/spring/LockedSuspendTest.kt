package io.reactivelocks.spring

import io.reactivelocks.Lease
import io.reactivelocks.LockClient
import io.reactivelocks.LockLostException
import io.reactivelocks.LockTimeoutException
import io.reactivelocks.spring.RedisFixture.STEP
import java.time.Duration
import java.util.function.Supplier
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.scheduling.TaskScheduler
import org.springframework.scheduling.annotation.EnableScheduling
import org.springframework.scheduling.annotation.Scheduled
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler

/**
 * [Locked] and [ScheduledLock] on Kotlin `suspend` functions, in two real application contexts (two
 * instances of one service), each with its own [LockClient] on one real redis-server. The calls run on
 * `Dispatchers.Default`, where BlockHound (with the kotlinx.coroutines integration) catches any blocking call.
 */
class LockedSuspendTest {

    companion object {
        private lateinit var redis: RedisFixture
        private val probe = Probe()
        private val ticks = Probe()
        private lateinit var a: AnnotationConfigApplicationContext
        private lateinit var b: AnnotationConfigApplicationContext

        @JvmStatic
        @BeforeAll
        fun start() {
            redis = RedisFixture()
            a = instance("a", Enable::class.java)
            b = instance("b", Enable::class.java)
        }

        @JvmStatic
        @AfterAll
        fun stop() {
            try {
                if (::a.isInitialized) a.close()
                if (::b.isInitialized) b.close()
            } finally {
                if (::redis.isInitialized) redis.close()
            }
        }

        /** One instance of the service: its own context and lock client, the shared probes. */
        private fun instance(name: String, config: Class<*>): AnnotationConfigApplicationContext {
            val ctx = AnnotationConfigApplicationContext()
            val client = redis.newClient()
            ctx.registerBean("lockClient", LockClient::class.java, Supplier { client })
            ctx.registerBean(Jobs::class.java, Supplier { Jobs(probe, name) })
            ctx.registerBean(Inner::class.java, Supplier { Inner() })
            ctx.registerBean(Outer::class.java, Supplier { Outer(ctx.getBean(Inner::class.java)) })
            ctx.register(config)
            ctx.refresh()
            return ctx
        }
    }

    @AfterEach
    fun nothingLeftOnTheServer() {
        await().atMost(STEP).until { redis.lockKeys().isEmpty() }
    }

    @Test
    fun concurrentSuspendCallsFromTwoInstancesNeverOverlapAndTheirTokensGrow(): Unit = runBlocking {
        val jobsA = a.getBean(Jobs::class.java)
        val jobsB = b.getBean(Jobs::class.java)
        val before = probe.tokens.size
        val results = withTimeout(30_000) {
            (0 until 5).flatMap {
                listOf(async(Dispatchers.Default) { jobsA.run("apple") }, async(Dispatchers.Default) { jobsB.run("apple") })
            }.awaitAll()
        }

        assertThat(results).hasSize(10)
        assertThat(probe.maxInside.get()).`as`("never two runs inside at once").isEqualTo(1)
        val tokens = probe.tokens.subList(before, probe.tokens.size).toList()
        assertThat(tokens).`as`("one run per call").hasSize(10)
        assertThat(tokens).`as`("fencing tokens strictly increase, in the order the runs entered").isSorted.doesNotHaveDuplicates()
        assertThat(results).`as`("each call returned the token of its own lease").containsExactlyInAnyOrderElementsOf(tokens)
        assertThat(probe.instances.subList(before, probe.instances.size)).`as`("both instances ran").contains("a", "b")
    }

    @Test
    fun theLeaseIsInTheCoroutinesReactorContextAndAFlowRunsUnderTheLock(): Unit = runBlocking(Dispatchers.Default) {
        val jobs = a.getBean(Jobs::class.java)
        val lease = jobs.lease("fig")!!
        assertThat(lease.name()).isEqualTo("lease:fig")
        assertThat(lease.token()).isPositive()
        assertThat(lease.isValid).`as`("released when the call returned").isFalse()

        // a suspend function returning a Flow: the whole collection runs under the lock, with the lease in its context
        val tokens = jobs.tokens("pear").toList()
        assertThat(tokens).hasSize(3)
        assertThat(tokens.toSet()).`as`("one lease for the whole flow").hasSize(1)
        assertThat(tokens[0]).isPositive()

        // outside any locked function there is no lease
        assertThat(LockedContext.lease().awaitSingleOrNull()).isNull()
    }

    @Test
    fun aNestedSuspendLockedFunctionOnTheSameNameReentersTheLease(): Unit = runBlocking(Dispatchers.Default) {
        val (outer, inner) = withTimeout(STEP.toMillis()) { a.getBean(Outer::class.java).outer("melon") }
        assertThat(inner).`as`("same lease inside").isEqualTo(outer)
    }

    @Test
    fun deletingTheLockKeyCancelsTheRunningSuspendCallAndTheCallerGetsLockLost() {
        val jobs = a.getBean(Jobs::class.java)
        val cancelled = probe.cancelled.get()
        runBlocking {
            val call = async(Dispatchers.Default) { runCatching { jobs.forever("grape") } }
            await().atMost(STEP).until { redis.lockKeys().size == 1 }
            // the key disappears behind the holder's back: its next renewal finds the lease gone
            assertThat(redis.deleteLock("loss:grape")).isEqualTo(1)
            val outcome = withTimeout(STEP.toMillis()) { call.await() }
            assertThat(outcome.exceptionOrNull()).isInstanceOf(LockLostException::class.java)
        }
        await().atMost(STEP).untilAsserted {
            assertThat(probe.cancelled.get()).`as`("the suspend function was cancelled").isEqualTo(cancelled + 1)
        }
    }

    @Test
    fun skipReturnsNullAndFailThrowsWithoutRunningTheBodyWhileAnotherInstanceHoldsTheLock() {
        val jobs = a.getBean(Jobs::class.java)
        val held = b.getBean(LockClient::class.java).acquire("try:kiwi").block(STEP)!!
        val invoked = probe.invocations.get()
        try {
            runBlocking(Dispatchers.Default) {
                assertThat(jobs.skip("kiwi")).isNull()
                assertThrows<LockTimeoutException> { jobs.fail("kiwi") }
            }
            assertThat(probe.invocations.get()).`as`("the body did not run").isEqualTo(invoked)
        } finally {
            held.release().block(STEP)
        }
        runBlocking(Dispatchers.Default) {
            assertThat(jobs.skip("kiwi")).isEqualTo("ran")
            assertThat(jobs.fail("kiwi")).isEqualTo("ran")
        }
        assertThat(probe.invocations.get()).isEqualTo(invoked + 2)
    }

    @Test
    fun aScheduledSuspendFunctionRunsUnderTheLockOnOneInstanceAtATime() {
        val x = instance("x", Scheduling::class.java)
        val y = instance("y", Scheduling::class.java)
        try {
            await().atMost(Duration.ofSeconds(15)).until { ticks.tokens.size >= 6 }
        } finally {
            x.close()
            y.close()
        }
        assertThat(ticks.maxInside.get()).`as`("never two runs at once").isEqualTo(1)
        val tokens = ticks.tokens.toList()
        assertThat(tokens).`as`("each run saw its lease").allMatch { it > 0 }
        assertThat(tokens).`as`("fencing tokens strictly increase").isSorted.doesNotHaveDuplicates()
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking
    open class Enable

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableReactiveLocking
    open class Scheduling {
        @Bean(destroyMethod = "destroy")
        open fun taskScheduler(): TaskScheduler = ThreadPoolTaskScheduler().apply {
            poolSize = 2
            setThreadNamePrefix("ticks-")
        }

        @Bean
        open fun ticker(): Ticker = Ticker()
    }

    /** The suspend jobs of one instance (open: the proxy subclasses it). */
    open class Jobs internal constructor(private val probe: Probe, private val instance: String) {

        @Locked("job:#{#p0}")
        open suspend fun run(name: String): Long {
            val lease = LockedContext.lease().awaitSingle()
            probe.enter(instance, lease.token())
            try {
                delay(20)
            } finally {
                probe.exit()
            }
            return lease.token()
        }

        @Locked("lease:#{#p0}")
        open suspend fun lease(name: String): Lease? {
            val lease = LockedContext.lease().awaitSingleOrNull()
            check(lease != null && lease.isValid) { "no valid lease inside: $lease" }
            return lease
        }

        @Locked("flow:#{#p0}")
        open suspend fun tokens(name: String): Flow<Long> = flow {
            repeat(3) {
                emit(LockedContext.lease().awaitSingle().token())
                delay(5)
            }
        }

        @Locked("loss:#{#p0}")
        open suspend fun forever(name: String): String {
            try {
                awaitCancellation()
            } catch (e: CancellationException) {
                probe.cancelled.incrementAndGet()
                throw e
            }
        }

        @Locked("try:#{#p0}", whenHeld = Locked.WhenHeld.SKIP)
        open suspend fun skip(name: String): String? {
            probe.invocations.incrementAndGet()
            return "ran"
        }

        @Locked("try:#{#p0}", whenHeld = Locked.WhenHeld.FAIL)
        open suspend fun fail(name: String): String {
            probe.invocations.incrementAndGet()
            return "ran"
        }
    }

    /** Calls [Inner.inner] (through its proxy) while holding the same lock. */
    open class Outer internal constructor(private val inner: Inner) {
        @Locked("re:#{#p0}")
        open suspend fun outer(name: String): Pair<Long, Long> =
            LockedContext.lease().awaitSingle().token() to inner.inner(name)
    }

    /** Locks the same name as [Outer.outer], waiting for it: only reentering the held lease answers within the test's timeout. */
    open class Inner {
        @Locked("re:#{#p0}")
        open suspend fun inner(name: String): Long = LockedContext.lease().awaitSingle().token()
    }

    /** A suspend `@Scheduled` job (the scheduling contexts only). */
    open class Ticker {
        @Scheduled(fixedDelay = 30)
        @ScheduledLock(name = "tick", lockAtMostFor = "5s")
        open suspend fun tick() {
            val lease = LockedContext.lease().awaitSingle()
            ticks.enter("tick", lease.token())
            try {
                delay(20)
            } finally {
                ticks.exit()
            }
        }
    }
}
