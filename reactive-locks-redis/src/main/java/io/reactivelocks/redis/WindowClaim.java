package io.reactivelocks.redis;

import java.time.Duration;
import java.util.Objects;

/**
 * A won claim of a {@link RedisWindowLock}: this caller is the first of the current window.
 *
 * @param name      the lock name
 * @param period    the window length
 * @param window    the window number, {@code floor(server time / period)}: it increases with every
 *                  window, so it can serve as a fencing token for work done once per window
 * @param remaining the time left in the window by the server's clock when it was claimed
 */
public record WindowClaim(String name, Duration period, long window, Duration remaining) {
    /** Checks the fields. */
    public WindowClaim {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(remaining, "remaining");
    }
}
