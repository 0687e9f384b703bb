package io.reactivelocks.kotlin

import io.reactivelocks.Lease
import io.reactivelocks.election.Leadership
import io.reactivelocks.multi.MultiLease
import kotlinx.coroutines.reactor.awaitSingleOrNull

// The members of these types return Mono; a Kotlin extension of the same name would be shadowed by
// them, so the suspending forms are named after what they wait for.

/**
 * Releases the lease and suspends until the store confirmed ([Lease.release]): owner-checked,
 * idempotent (later calls return at once).
 *
 * @throws io.reactivelocks.LockBackendException when the store could not be reached (the lease
 *         then simply expires by its TTL)
 */
public suspend fun Lease.releaseAndAwait() {
    release().awaitSingleOrNull()
}

/**
 * Releases at the end of work done under this lease and suspends until done ([Lease.releaseAfterWork]):
 * like [releaseAndAwait], except that a release the store does not confirm is not an error — it is
 * reported (listener, metrics, one WARN line) and the lease is left to expire, its token fenced.
 */
public suspend fun Lease.releaseAfterWorkAndAwait() {
    releaseAfterWork().awaitSingleOrNull()
}

/**
 * Replaces the payload stored with this grant and suspends until the store confirmed
 * ([Lease.updatePayload]).
 *
 * @param payload the new payload, or `null` to remove it
 * @throws IllegalArgumentException naming `payload` when it is too long or malformed (at call time)
 * @throws io.reactivelocks.LockLostException when the lease is no longer held
 */
public suspend fun Lease.updatePayloadAndAwait(payload: String?) {
    updatePayload(payload).awaitSingleOrNull()
}

/** Suspends until the lease is lost ([Lease.lost]); never returns when it is released by its owner. */
public suspend fun Lease.awaitLost() {
    lost().awaitSingleOrNull()
}

/**
 * Suspends until an operator asks this lease's holder to let go ([Lease.revoked],
 * [io.reactivelocks.admin.LockAdmin.revoke]).
 *
 * @return the request's reason, or `null` when the lease ended (released or lost) first
 */
public suspend fun Lease.awaitRevoked(): String? = revoked().awaitSingleOrNull()

/**
 * Releases every lease of the set and suspends until each release was answered ([MultiLease.release]).
 *
 * @throws io.reactivelocks.LockBackendException when a release could not reach the store
 */
public suspend fun MultiLease.releaseAndAwait() {
    release().awaitSingleOrNull()
}

/** Suspends until a lease of the set is lost ([MultiLease.lost]); never returns when the set is released. */
public suspend fun MultiLease.awaitLost() {
    lost().awaitSingleOrNull()
}

/**
 * Publishes a new value while leading and suspends until the store confirmed ([Leadership.proclaim]).
 *
 * @param value the new value
 * @throws io.reactivelocks.LockLostException when this term is over
 */
public suspend fun Leadership.proclaimAndAwait(value: String) {
    proclaim(value).awaitSingleOrNull()
}

/** Gives leadership up and suspends until the store confirmed ([Leadership.resign]). Idempotent. */
public suspend fun Leadership.resignAndAwait() {
    resign().awaitSingleOrNull()
}

/** Suspends until this term is lost ([Leadership.lost]); never returns when it is resigned. */
public suspend fun Leadership.awaitLost() {
    lost().awaitSingleOrNull()
}
