package io.reactivelocks.docs

import io.reactivelocks.LockClient
import io.reactivelocks.local.LocalLockBackend
import io.reactivelocks.spring.EnableReactiveLocking
import io.reactivelocks.spring.Locked
import io.reactivelocks.spring.LockedContext
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import java.util.function.Supplier
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Configuration

/** The Kotlin sample of docs/spring.md: `@Locked` on a suspend function, in a Spring context on the in-memory store. */
class DocsSpringSuspendTest {

    /** A fenced stock table whose writes suspend. */
    class StockTable {
        val inside = AtomicInteger()
        val mostInside = AtomicInteger()
        private val fences = ConcurrentHashMap<String, Long>()

        suspend fun write(sku: String, qty: Long, token: Long): Boolean {
            mostInside.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
            delay(5)
            inside.decrementAndGet()
            return fences.merge(sku, token, ::maxOf) == token
        }
    }

    open class Stock(private val stock: StockTable) {
        // tag::locked-suspend[]
        @Locked("stock:#{#p0}")
        open suspend fun reserve(sku: String, qty: Long): Boolean {
            val lease = LockedContext.lease().awaitSingle()         // kotlinx.coroutines.reactor.awaitSingle
            return stock.write(sku, qty, lease.token())
        }
        // end::locked-suspend[]
    }

    @Configuration(proxyBeanMethods = false)
    @EnableReactiveLocking
    open class Enable

    @Test
    fun suspendFunctionsRunUnderTheLock(): Unit = runBlocking {
        val client = LocalLockBackend.client()
        val ctx = AnnotationConfigApplicationContext()
        ctx.registerBean("lockClient", LockClient::class.java, Supplier { client })
        val table = StockTable()
        ctx.registerBean(Stock::class.java, Supplier { Stock(table) })
        ctx.register(Enable::class.java)
        ctx.refresh()
        try {
            val stock = ctx.getBean(Stock::class.java)
            withTimeout(10_000) {
                val written = (1..10).map { async(Dispatchers.Default) { stock.reserve("apple", 1) } }.awaitAll()
                assertThat(written).containsOnly(true)
            }
            assertThat(table.mostInside.get()).isEqualTo(1)
        } finally {
            ctx.close()
            client.close().block(java.time.Duration.ofSeconds(10))
        }
    }
}
