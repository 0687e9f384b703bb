package io.reactivelocks.examples.kotlin

import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Value
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.web.reactive.function.client.WebClient
import org.springframework.web.reactive.function.client.awaitBody

/** The service on a random port: concurrent requests take turns under the lock. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TicketControllerTest {

    @Value("\${local.server.port}")
    var port: Int = 0

    private val ticket = Regex(""""number":(\d+).*"token":(\d+)""")

    @Test
    fun concurrentRequestsGetEveryNumberOnceInTokenOrder(): Unit = runBlocking {
        val web = WebClient.create("http://localhost:$port")
        val tickets = withTimeout(30.seconds) {
            (1..24).map {
                async(Dispatchers.Default) {
                    web.post().uri("/events/{event}/tickets", "concert").retrieve().awaitBody<String>()
                }
            }.awaitAll()
        }.map { body ->
            val (number, token) = ticket.find(body)!!.destructured
            number.toLong() to token.toLong()
        }
        // without the lock, requests reading the same last number would hand it out twice
        assertThat(tickets.map { it.first }).containsExactlyInAnyOrderElementsOf((1L..24L).toList())
        // each number was written under its own grant, and later numbers under later grants
        val tokensInNumberOrder = tickets.sortedBy { it.first }.map { it.second }
        assertThat(tokensInNumberOrder).isSorted().doesNotHaveDuplicates()
    }
}
