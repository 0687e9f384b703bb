package io.reactivelocks.r2dbc.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The argument checks the SQL dialects' option builders share; each message names the argument.
 * Not API: the dialect packages' code.
 */
public final class OptionChecks {

    private OptionChecks() {
    }

    /**
     * @param d    a duration
     * @param name the argument's name, for the messages
     * @return {@code d}
     * @throws NullPointerException     when {@code d} is null
     * @throws IllegalArgumentException when it is zero or negative
     */
    public static Duration positive(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + d);
        }
        return d;
    }

    /**
     * @param size a pool's most connections
     * @return {@code size}
     * @throws IllegalArgumentException when it is below 1
     */
    public static int poolMaxSize(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("poolMaxSize must be at least 1, was " + size);
        }
        return size;
    }
}
