package io.reactivelocks.admin;

import io.reactivelocks.internal.admin.DefaultLockAdmin;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.spi.task.TaskStore;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What an operator sees and does on a store, across every client of it: who holds what under a
 * prefix, and taking a name away from its holders. Obtain it from a session with
 * {@link io.reactivelocks.LockStore#admin()}; it works over the session's connections.
 *
 * <p>A force-release is safe by the fence: the store's token counters are left as they are, so the
 * next grant's token is above every token handed out before, and a write the evicted holder sends
 * late is refused by any resource that checks tokens ({@link io.reactivelocks.fencing.Fencing}).
 * The evicted holder learns it at its next renewal (a per-lease store) or from its watch of the
 * held key (a session store): its hold stream ends with a loss, as for an expiry.
 *
 * <p>Every method is lazy and non-blocking, bounded by the store's request timeout per request, and
 * errors with a {@link io.reactivelocks.LockBackendException} when the store fails.
 */
public interface LockAdmin {

    /**
     * Every grant held now on a name that starts with {@code prefix}: lock holders, semaphore
     * permits, readers and writers, task claims (on the queue's name), whoever holds them. A name is data: {@code prefix} matches
     * literally (no wildcards). The order is by name, then by token.
     *
     * @param prefix the start of the names to list; {@code ""} lists every name of the store
     * @return the grants, one per holder; empty when nothing is held
     * @throws NullPointerException when {@code prefix} is null
     */
    Flux<HeldGrant> list(String prefix);

    /**
     * Takes {@code name} away from every holder — the lock's holder, every permit, every reader and
     * the writer, every claim of the queue of that name (its tasks become capturable again) — without
     * waiting for their leases, and wakes the waiters. Tokens go on from where
     * they were, so the next grant is fenced above the evicted ones.
     *
     * @param name the name to free
     * @return the grants removed (empty when nothing was held)
     * @throws NullPointerException     when {@code name} is null
     * @throws IllegalArgumentException when {@code name} is empty or longer than 1024 UTF-8 bytes
     */
    Mono<List<HeldGrant>> forceRelease(String name);

    /**
     * Asks the holders of {@code name} — the lock's holder, every permit, every reader and the
     * writer — to let go: cooperative. Each holder's
     * {@link io.reactivelocks.Lease#revoked()} emits {@code reason}; it may finish its work and
     * release, or ignore the request and keep the lock until it is {@linkplain #forceRelease
     * force-released}. The request goes over the store's notification channel and is not stored: a
     * holder that does not listen does not receive it (send it again, or force-release). Task claims
     * are not asked (a claim is not a lease: force-release makes its task capturable again).
     *
     * @param name   the lock name
     * @param reason why, in words (shown to the holder), at most {@value #MAX_REASON_LENGTH} characters
     * @return {@code true} when something was held and its holders asked, {@code false} when nothing
     *         was; errors with {@link UnsupportedOperationException} when the store cannot send requests
     * @throws NullPointerException     when an argument is null
     * @throws IllegalArgumentException when {@code name} is empty or too long, or {@code reason} is longer
     *                                  than {@value #MAX_REASON_LENGTH} characters
     */
    Mono<Boolean> revoke(String name, String reason);

    /** The longest reason {@link #revoke} takes, in characters (it travels in a notification). */
    int MAX_REASON_LENGTH = 500;

    /**
     * The admin of a store over its parts. For store authors: a session built on
     * {@link io.reactivelocks.spi.store.AbstractLockStore} hands one out by itself.
     *
     * @param scan       what names the store holds grants on
     * @param locks      the store's lock part
     * @param semaphores the store's semaphore part, or {@code null} when it offers none
     * @param readWrite  the store's read-write part, or {@code null} when it offers none
     * @param tasks      the store's task part, or {@code null} when it offers none
     * @return the admin
     */
    static LockAdmin create(NameScan scan, LockBackend locks, @Nullable SemaphoreStore semaphores,
                            @Nullable ReadWriteStore readWrite, @Nullable TaskStore tasks) {
        return new DefaultLockAdmin(scan, locks, semaphores, readWrite, tasks);
    }
}
