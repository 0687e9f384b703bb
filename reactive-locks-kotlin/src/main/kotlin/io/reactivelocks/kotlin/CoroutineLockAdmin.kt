package io.reactivelocks.kotlin

import io.reactivelocks.admin.HeldGrant
import io.reactivelocks.admin.LockAdmin
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactor.awaitSingle

/**
 * The coroutine face of [LockAdmin]: what every client of the store holds under a prefix, and
 * force-release. Every function delegates to [reactive] and keeps its semantics.
 *
 * ```kotlin
 * val admin = store.coroutines().admin()
 * admin.list("orders:").collect { println("${it.name} held by ${it.owner} (token ${it.token})") }
 * val evicted = admin.forceRelease("orders:42")
 * ```
 *
 * @property reactive the admin every call goes to
 */
public class CoroutineLockAdmin(public val reactive: LockAdmin) {

    /**
     * Every grant held now on a name starting with [prefix] ([LockAdmin.list]), by name then token.
     *
     * @param prefix the start of the names, matched literally; `""` for all
     * @return the grants, one per holder
     */
    public fun list(prefix: String): Flow<HeldGrant> = reactive.list(prefix).asFlow()

    /**
     * Takes [name] away from every holder ([LockAdmin.forceRelease]): tokens go on, so the next
     * grant is fenced above the evicted ones.
     *
     * @param name the name to free
     * @return the grants removed (empty when nothing was held)
     * @throws io.reactivelocks.LockBackendException when the store fails
     */
    public suspend fun forceRelease(name: String): List<HeldGrant> = reactive.forceRelease(name).awaitSingle()

    /**
     * Asks the holder of the lock [name] to let go ([LockAdmin.revoke]): cooperative, its
     * `Lease.awaitRevoked()` returns [reason].
     *
     * @param name the lock name
     * @param reason why, in words
     * @return `true` when the lock was held and its holder asked, `false` when it was free
     * @throws io.reactivelocks.LockBackendException when the store fails
     */
    public suspend fun revoke(name: String, reason: String): Boolean = reactive.revoke(name, reason).awaitSingle()
}

/** @return the coroutine face of this admin */
public fun LockAdmin.coroutines(): CoroutineLockAdmin = CoroutineLockAdmin(this)
