package io.reactivelocks.examples.kotlin

import io.reactivelocks.kotlin.CoroutineLockClient
import org.springframework.web.bind.annotation.PathVariable
import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RestController

/** An issued ticket: its number within the event and the fencing token of the lock that numbered it. */
data class Ticket(val event: String, val number: Long, val token: Long)

/**
 * Issues consecutive ticket numbers per event. Reading the last number and writing the next one
 * are two separate (suspending) store calls: without the lock, concurrent requests would read the
 * same number and hand it out twice. Under `withLock` they take turns, across every instance of
 * the service that shares the lock store.
 */
@RestController
class TicketController(private val locks: CoroutineLockClient, private val counters: TicketCounters) {

    /** Issues the next ticket of [event]: a suspend handler, the lock held only while it numbers. */
    @PostMapping("/events/{event}/tickets")
    suspend fun issue(@PathVariable event: String): Ticket =
        locks.withLock("tickets:$event") { lease ->
            val next = counters.last(event) + 1
            counters.store(event, next, lease.token())   // refused if a later lock holder wrote already
            Ticket(event, next, lease.token())
        }
}
