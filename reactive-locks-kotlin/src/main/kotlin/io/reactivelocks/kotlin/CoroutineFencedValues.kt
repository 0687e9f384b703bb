package io.reactivelocks.kotlin

import io.reactivelocks.fencing.FencedValue
import io.reactivelocks.fencing.FencedValues
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.reactor.awaitSingleOrNull

/**
 * The coroutine face of [FencedValues]: a key/value resource where each key keeps the highest
 * fencing token accepted for it, and a write or delete carrying a lower token is refused. Every
 * function delegates to [reactive] and keeps its semantics: one store request per call;
 * cancelling the caller does not recall a request already sent.
 *
 * ```kotlin
 * val values = LocalLocks.open().coroutines().fencedValues()
 * locks.withLock("config") { lease -> values.write("config", lease.token(), json) }   // false: a newer holder wrote
 * ```
 *
 * @property reactive the resource every call goes to; close it with [close]
 */
public class CoroutineFencedValues(public val reactive: FencedValues) {

    /**
     * Writes [value] under [key] if [token] is at least the key's fence, and raises the fence to
     * [token] ([FencedValues.write]).
     *
     * @param key the key
     * @param token the writer's fencing token, e.g. `lease.token()`
     * @param value the value
     * @return `true` when the write was accepted, `false` when refused (a newer writer's token is on the key)
     * @throws IllegalArgumentException when the key is empty or too long (at call time)
     * @throws io.reactivelocks.LockBackendException when the store fails
     */
    public suspend fun write(key: String, token: Long, value: String): Boolean =
        reactive.write(key, token, value).awaitSingle()

    /**
     * Reads the value of [key] and its fence ([FencedValues.read]).
     *
     * @param key the key
     * @return the value and its fence, or `null` when the key has no value
     * @throws io.reactivelocks.LockBackendException when the store fails
     */
    public suspend fun read(key: String): FencedValue? = reactive.read(key).awaitSingleOrNull()

    /**
     * Deletes the value of [key] if [token] is at least the key's fence, and raises the fence to
     * [token] ([FencedValues.delete]); the fence stays, so an older writer cannot bring the value back.
     *
     * @param key the key
     * @param token the writer's fencing token
     * @return `true` when the delete was admitted (whether or not there was a value), `false` when refused
     * @throws io.reactivelocks.LockBackendException when the store fails
     */
    public suspend fun delete(key: String, token: Long): Boolean = reactive.delete(key, token).awaitSingle()

    /** Releases the connections this resource opened, not those passed in ([FencedValues.close]). Idempotent. */
    public suspend fun close() {
        reactive.close().awaitSingleOrNull()
    }
}

/** @return the coroutine face of these fenced values */
public fun FencedValues.coroutines(): CoroutineFencedValues = CoroutineFencedValues(this)
