package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * Who holds a lock, as the store says.
 *
 * @param owner     the holder's owner id
 * @param token     the holder's fencing token
 * @param remaining the holder's remaining TTL by the store's clock, or {@code null} when the store
 *                  has no per-lock TTL (session-based stores)
 */
public record Holder(String owner, long token, Duration remaining) {
    /** Checks the fields. */
    public Holder {
        Objects.requireNonNull(owner, "owner");
    }
}
