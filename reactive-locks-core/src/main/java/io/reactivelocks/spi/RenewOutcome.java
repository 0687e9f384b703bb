package io.reactivelocks.spi;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The store's answer for one lease of a {@link LockBackend#renew} batch.
 *
 * @param renewed {@code true} when the owner still held the lock and its TTL was set again
 * @param ttl     the TTL granted, when renewed; {@code null} otherwise
 */
public record RenewOutcome(boolean renewed, @Nullable Duration ttl) {

    private static final RenewOutcome NOT_HELD = new RenewOutcome(false, null);

    /**
     * @param ttl the TTL the store set
     * @return a successful renewal
     */
    public static RenewOutcome renewed(Duration ttl) {
        return new RenewOutcome(true, java.util.Objects.requireNonNull(ttl, "ttl"));
    }

    /** @return the answer for a lease whose key is gone or belongs to another owner */
    public static RenewOutcome notHeld() {
        return NOT_HELD;
    }
}
