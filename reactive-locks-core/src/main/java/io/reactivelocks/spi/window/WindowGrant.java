package io.reactivelocks.spi.window;

import java.time.Duration;
import java.util.Objects;

/**
 * What a store answers for a won window: the index, the fencing token and the time left.
 *
 * @param window    the window index, {@code floor(store time / period)}
 * @param token     the fencing token: strictly greater than every token the store handed out
 *                  before for this name, across server restarts
 * @param remaining the time left in the window by the store's clock when it was claimed (not negative)
 */
public record WindowGrant(long window, long token, Duration remaining) {

    /** Checks the fields. */
    public WindowGrant {
        Objects.requireNonNull(remaining, "remaining");
        if (remaining.isNegative()) {
            throw new IllegalArgumentException("remaining must not be negative, was " + remaining);
        }
    }
}
