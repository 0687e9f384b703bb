package io.reactivelocks.r2dbc;

import java.time.Duration;
import java.util.Objects;

/**
 * A won claim of a {@link PostgresWindowLock}: this caller is the first of the current window.
 *
 * @param name      the lock name
 * @param period    the window length
 * @param window    the window number, {@code floor(server epoch / period)}; it increases with every window
 * @param token     a fencing token from the lock sequence, greater than that of every earlier claim
 * @param remaining the time left in the window by the server's clock when it was claimed
 */
public record WindowClaim(String name, Duration period, long window, long token, Duration remaining) {
    /** Checks the fields. */
    public WindowClaim {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(period, "period");
        Objects.requireNonNull(remaining, "remaining");
    }
}
