package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * A confirmation from a {@link RenewalMode#SESSION} store that the lease is alive.
 *
 * @param sentAtNanos on the engine's clock, when the confirming request was sent
 * @param ttl         how long after that the store keeps the lease without another confirmation
 */
public record Renewal(long sentAtNanos, Duration ttl) {
    /** Checks the fields. */
    public Renewal {
        Objects.requireNonNull(ttl, "ttl");
    }
}
