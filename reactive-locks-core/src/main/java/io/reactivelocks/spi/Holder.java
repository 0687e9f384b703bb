package io.reactivelocks.spi;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who holds a lock, as the store says.
 *
 * @param owner     the holder's owner id
 * @param token     the holder's fencing token
 * @param remaining the holder's remaining TTL by the store's clock, or {@code null} when the store
 *                  has no per-lock TTL (session-based stores)
 * @param payload   the value stored with the grant, or {@code null} for none
 */
public record Holder(String owner, long token, @Nullable Duration remaining, @Nullable String payload) {
    /** Checks the fields. */
    public Holder {
        Objects.requireNonNull(owner, "owner");
    }

    /**
     * A holder without payload.
     *
     * @param owner     the holder's owner id
     * @param token     the holder's fencing token
     * @param remaining the holder's remaining TTL, or {@code null}
     */
    public Holder(String owner, long token, @Nullable Duration remaining) {
        this(owner, token, remaining, null);
    }
}
