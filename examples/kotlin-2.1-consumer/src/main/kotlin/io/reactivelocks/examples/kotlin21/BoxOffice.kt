package io.reactivelocks.examples.kotlin21

import io.reactivelocks.Lease
import io.reactivelocks.kotlin.CoroutineLockClient
import io.reactivelocks.kotlin.CoroutineSemaphore
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.yield

/** A ticket: its number for the event, and the fencing token of the lease it was numbered under. */
data class Ticket(val event: String, val number: Long, val fence: Long)

/**
 * What a Kotlin 2.1 application does with reactive-locks-kotlin: numbers tickets one at a time under
 * [CoroutineLockClient.withLock], prints them on at most [printerCount] printers at once under
 * [CoroutineSemaphore.withPermit], and takes a lock as a [CoroutineLockClient.hold] flow.
 */
class BoxOffice(
    private val locks: CoroutineLockClient,
    private val printers: CoroutineSemaphore,
    private val printerCount: Int,
) {
    private val lastNumbers = ConcurrentHashMap<String, Long>()
    private val printing = AtomicInteger()
    private val mostPrinting = AtomicInteger()

    /** The most tickets that were being printed at the same moment. */
    val mostPrintingAtOnce: Int get() = mostPrinting.get()

    /** Gives the next number of [event]: read, suspend, write, under the event's lock. */
    suspend fun issue(event: String): Ticket =
        locks.withLock("tickets:$event") { lease ->
            val next = (lastNumbers[event] ?: 0L) + 1
            yield()                                             // other coroutines run while the lock is held
            lastNumbers[event] = next
            Ticket(event, next, lease.token())
        }

    /** Prints [ticket] while holding one of the printers' permits. */
    suspend fun print(ticket: Ticket): String =
        printers.withPermit("printers", permits = printerCount) { permit ->
            mostPrinting.accumulateAndGet(printing.incrementAndGet(), ::maxOf)
            try {
                yield()
                "${ticket.event} #${ticket.number} on printer permit ${permit.token()}"
            } finally {
                printing.decrementAndGet()
            }
        }

    /** Takes the lock [name] as a flow and stops collecting at its first lease, which releases it. */
    suspend fun holdOnce(name: String): Lease = locks.hold(name).first()
}
