package io.reactivelocks.examples.kotlin

import io.reactivelocks.fencing.Fencing
import java.util.concurrent.ConcurrentHashMap
import kotlinx.coroutines.delay

/**
 * The last ticket number of each event, as a remote store would keep it: every call suspends for
 * a moment (the network), and a write carries the writer's fencing token, refused when a later
 * lock holder has written already ([Fencing.admits]).
 */
class TicketCounters {

    private data class Counter(val number: Long, val token: Long)

    private val counters = ConcurrentHashMap<String, Counter>()

    /** @return the last number issued for [event], 0 before the first */
    suspend fun last(event: String): Long {
        delay(2)
        return counters[event]?.number ?: 0
    }

    /**
     * Stores [number] as the last of [event], written under the lock whose token is [token].
     *
     * @throws IllegalStateException when a later lock holder (a larger token) has written already
     */
    suspend fun store(event: String, number: Long, token: Long) {
        delay(2)
        counters.compute(event) { _, old ->
            check(old == null || Fencing.admits(old.token, token)) { "stale token $token, the counter has seen ${old!!.token}" }
            Counter(number, token)
        }
    }
}
