package io.reactivelocks.r2dbc.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Durations as the SQL dialects' statements count them: whole microseconds by the server's clock.
 * Not API: the dialect packages' code.
 */
public final class Micros {

    private Micros() {
    }

    /**
     * @param d a lease or deadline
     * @return {@code d} in whole microseconds, at least 1 (saturated for the longest durations)
     */
    public static long of(Duration d) {
        return Math.max(1, TimeUnit.MICROSECONDS.convert(d));
    }

    /**
     * @param us a remaining time the server reported in microseconds; negative once it passed
     * @return the remaining time, zero once it passed
     */
    public static Duration remaining(long us) {
        return Duration.ofNanos(Math.max(0, us) * 1000);
    }
}
