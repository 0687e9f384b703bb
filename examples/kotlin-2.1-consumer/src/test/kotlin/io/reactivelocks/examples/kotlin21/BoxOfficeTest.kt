package io.reactivelocks.examples.kotlin21

import io.reactivelocks.LockState
import io.reactivelocks.kotlin.CoroutineLockClient
import io.reactivelocks.kotlin.coroutines
import io.reactivelocks.local.LocalLockBackend
import io.reactivelocks.local.LocalSemaphoreStore
import io.reactivelocks.semaphore.Semaphore
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Runs the Kotlin 2.1 code of [BoxOffice] on the in-memory stores. */
class BoxOfficeTest {

    private val step = 10_000L

    @Test
    fun numbersTicketsOneAtATimeAndPrintsOnAtMostTwoPrinters(): Unit = runBlocking {
        withTimeout(step) {
            val locks = LocalLockBackend.client().coroutines()
            val printers = Semaphore.create(LocalSemaphoreStore()).coroutines()
            val office = BoxOffice(locks, printers, printerCount = 2)
            try {
                val tickets = withContext(Dispatchers.Default) {
                    (1..20).map { async { office.issue("concert") } }.awaitAll()
                }
                assertEquals((1L..20L).toList(), tickets.map { it.number }.sorted())
                val byNumber = tickets.sortedBy { it.number }
                assertTrue(byNumber.zipWithNext().all { (earlier, later) -> earlier.fence < later.fence }) {
                    "later numbers carry later fencing tokens: $byNumber"
                }

                val printed = withContext(Dispatchers.Default) {
                    tickets.map { async { office.print(it) } }.awaitAll()
                }
                assertEquals(20, printed.size)
                assertTrue(office.mostPrintingAtOnce in 1..2) { "at most 2 at once, was ${office.mostPrintingAtOnce}" }

                val lease = office.holdOnce("scheduler")
                assertTrue(lease.token() > 0)
                locks.awaitRelease("scheduler")                  // collecting stopped: the lock is released
                assertInstanceOf(LockState.Free::class.java, locks.inspect("scheduler"))
            } finally {
                printers.close()
                locks.close()
            }
        }
    }

    @Test
    fun theModuleAndThisProjectCarryMetadataAKotlin21CompilerReads() {
        // a Kotlin compiler reads metadata up to one minor version newer than its own
        assertEquals(listOf(2, 1), metadataVersion(CoroutineLockClient::class.java).take(2))
        assertEquals(listOf(2, 1), metadataVersion(BoxOffice::class.java).take(2))
    }

    private fun metadataVersion(type: Class<*>): List<Int> = type.getAnnotation(Metadata::class.java).metadataVersion.toList()
}
