package io.reactivelocks.examples.kotlin

import io.reactivelocks.LockClient
import io.reactivelocks.kotlin.CoroutineLockClient
import io.reactivelocks.kotlin.coroutines
import io.reactivelocks.local.LocalLockBackend
import java.time.Duration
import org.springframework.beans.factory.DisposableBean
import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.boot.runApplication
import org.springframework.context.annotation.Bean

/**
 * A WebFlux service in Kotlin whose controller numbers tickets under a lock ([TicketController]).
 * The lock client here is the in-memory one (one process); with the starter on the class path and
 * a Lettuce `RedisClient` bean, inject the starter's `LockClient` instead and call `coroutines()`.
 */
@SpringBootApplication(proxyBeanMethods = false)
class KotlinExampleApplication {

    /**
     * The reactive client. Not closed by Spring's inferred `close()` (which would only build the
     * `Mono`), but by [lockClientCloser].
     */
    @Bean(destroyMethod = "")
    fun lockClient(): LockClient = LocalLockBackend.client()

    /** Closes the client when the context closes (on the closing thread, never an event loop). */
    @Bean
    fun lockClientCloser(client: LockClient): DisposableBean =
        DisposableBean { client.close().block(Duration.ofSeconds(10)) }

    /** Its coroutine face, for the suspend controllers. */
    @Bean
    fun locks(client: LockClient): CoroutineLockClient = client.coroutines()

    /** Where the ticket numbers are kept. */
    @Bean
    fun ticketCounters(): TicketCounters = TicketCounters()
}

/** Starts the service (port 8080 unless `--server.port=...`). */
fun main(args: Array<String>) {
    runApplication<KotlinExampleApplication>(*args)
}
