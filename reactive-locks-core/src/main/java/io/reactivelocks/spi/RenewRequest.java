package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * One lease to renew in a {@link LockBackend#renew} batch.
 *
 * @param lock      the held lock
 * @param leaseTime the TTL to set again
 */
public record RenewRequest(HeldLock lock, Duration leaseTime) {
    /** Checks the fields. */
    public RenewRequest {
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(leaseTime, "leaseTime");
    }
}
