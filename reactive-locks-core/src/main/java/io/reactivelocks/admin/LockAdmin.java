package io.reactivelocks.admin;

import io.reactivelocks.internal.admin.DefaultLockAdmin;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.spi.NameScan;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
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
     * permits, readers and writers, whoever holds them. A name is data: {@code prefix} matches
     * literally (no wildcards). The order is by name, then by token.
     *
     * @param prefix the start of the names to list; {@code ""} lists every name of the store
     * @return the grants, one per holder; empty when nothing is held
     * @throws NullPointerException when {@code prefix} is null
     */
    Flux<HeldGrant> list(String prefix);

    /**
     * Takes {@code name} away from every holder — the lock's holder, every permit, every reader and
     * the writer — without waiting for their leases, and wakes the waiters. Tokens go on from where
     * they were, so the next grant is fenced above the evicted ones.
     *
     * @param name the name to free
     * @return the grants removed (empty when nothing was held)
     * @throws NullPointerException     when {@code name} is null
     * @throws IllegalArgumentException when {@code name} is empty or longer than 1024 UTF-8 bytes
     */
    Mono<List<HeldGrant>> forceRelease(String name);

    /**
     * The admin of a store over its parts. For store authors: a session built on
     * {@link io.reactivelocks.spi.store.AbstractLockStore} hands one out by itself.
     *
     * @param scan       what names the store holds grants on
     * @param locks      the store's lock part
     * @param semaphores the store's semaphore part, or {@code null} when it offers none
     * @param readWrite  the store's read-write part, or {@code null} when it offers none
     * @return the admin
     */
    static LockAdmin create(NameScan scan, LockBackend locks, @Nullable SemaphoreStore semaphores,
                            @Nullable ReadWriteStore readWrite) {
        return new DefaultLockAdmin(scan, locks, semaphores, readWrite);
    }
}
