package io.reactivelocks.multi;

import io.reactivelocks.Lease;
import java.time.Duration;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * A granted set of locks: one {@link Lease} per distinct name, each with its own fencing token,
 * each renewed in the background like any lease. The set is held all or nothing: when one lease
 * is lost, {@link #lost()} completes and the others are released at once (owner-checked), so a
 * multi-lease never stays half held.
 */
public interface MultiLease {

    /** @return the distinct names, in the canonical order in which they were taken (by their UTF-8 bytes) */
    List<String> names();

    /** @return the leases, one per name, in the order of {@link #names()} */
    List<Lease> leases();

    /**
     * @param name one of {@link #names()}
     * @return the lease of {@code name}
     * @throws IllegalArgumentException naming {@code name} when it is not part of this set
     */
    Lease lease(String name);

    /**
     * @param name one of {@link #names()}
     * @return the fencing token of {@code name}'s lease: pass it to the resource guarded by that name
     * @throws IllegalArgumentException naming {@code name} when it is not part of this set
     */
    default long token(String name) {
        return lease(name).token();
    }

    /** @return {@code true} while every lease of the set is valid (see {@link Lease#isValid()}) */
    boolean isValid();

    /** @return the shortest time left of the leases' current deadlines; zero when one has passed */
    Duration remaining();

    /**
     * Releases every lease of the set, owner-checked. Idempotent: later subscriptions complete at
     * once.
     *
     * @return a {@code Mono} that releases on subscribe and completes when every release was
     *         confirmed (or the lease was gone); errors with {@link io.reactivelocks.LockBackendException}
     *         when a release could not reach the store (the other releases still run; that lease
     *         expires by its TTL)
     */
    Mono<Void> release();

    /**
     * @return a {@code Mono} that completes when any lease of the set is lost; it does not
     *         complete when the set is released by its owner
     */
    Mono<Void> lost();
}
