package io.reactivelocks.window;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.Objects;

/**
 * A won claim of a {@link WindowLock}: this caller was the first of the window. Nothing is
 * released: the claim simply stops mattering when the window ends, and the next window is
 * claimable again.
 *
 * @param name        the lock name
 * @param period      the window length
 * @param window      the window index, {@code floor(store time / period)}: it grows with every window
 * @param token       the fencing token: strictly greater than the token of every earlier claim of
 *                    this name on the store (and than every other token the store handed out before)
 * @param endsAtNanos the local monotonic deadline (on the window lock's {@link LockClock}, in
 *                    nanoseconds) before which the window is known not to have ended: request send
 *                    time + the window's remaining time by the store's clock − drift allowance.
 *                    Never compare it with a wall clock.
 */
public record WindowClaim(String name, Duration period, long window, long token, long endsAtNanos) {

    /** Checks the fields. */
    public WindowClaim {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(period, "period");
    }

    /**
     * @param clock the clock of the window lock that made this claim ({@code LockOptions.clock()})
     * @return the time left until {@link #endsAtNanos()}; zero when it has passed
     */
    public Duration remaining(LockClock clock) {
        return Duration.ofNanos(Math.max(0, endsAtNanos - clock.nanoTime()));
    }
}
