package io.reactivelocks.kotlin

import io.reactivelocks.election.Leader
import io.reactivelocks.election.LeaderElection
import io.reactivelocks.election.Leadership
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of a [LeaderElection]: campaigns and leader changes as flows, the current
 * leader as a `suspend` function, "nobody leads" as `null`. Every function delegates to
 * [reactive] and keeps its semantics.
 *
 * ```kotlin
 * val elections = LeaderElection.create(locks).coroutines()
 * elections.campaign("scheduler", myAddress).collectLatest { term ->
 *     runSchedulerWhileLeading(term.token())   // cancelled when the next renewal is emitted or the term ends
 * }
 * ```
 *
 * @property reactive the elections every call goes to
 */
public class CoroutineLeaderElection(public val reactive: LeaderElection) {

    /**
     * Campaigns as a flow ([LeaderElection.campaign]): when collected, waits until this candidate
     * may lead, emits the [Leadership], then the same term again after each renewal; completes
     * when leadership is lost (before anyone else can be elected) or resigned. When the collector
     * stops, it resigns (or leaves the line).
     *
     * @param name the election name
     * @param value what observers see as the leader's value
     * @return the leadership flow
     */
    public fun campaign(name: String, value: String): Flow<Leadership> = reactive.campaign(name, value).asFlow()

    /**
     * Reads who leads now ([LeaderElection.leader]).
     *
     * @param name the election name
     * @return the current leader, or `null` when nobody leads
     * @throws io.reactivelocks.LockBackendException when the store cannot be read
     */
    public suspend fun leader(name: String): Leader? = reactive.leader(name).awaitSingleOrNull()

    /**
     * Who leads, as a flow ([LeaderElection.observe]): first the current leader (`null` when
     * nobody leads), then each change.
     *
     * @param name the election name
     * @return the leader flow
     */
    public fun observe(name: String): Flow<Leader?> = reactive.observe(name).asFlow().map { it.orElse(null) }
}

/** @return the coroutine face of these elections */
public fun LeaderElection.coroutines(): CoroutineLeaderElection = CoroutineLeaderElection(this)
