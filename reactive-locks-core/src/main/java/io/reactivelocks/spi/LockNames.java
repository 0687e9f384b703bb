package io.reactivelocks.spi;

import io.reactivelocks.LockClient;
import java.util.Objects;

/** The lock-name rules of {@link LockClient}, for backends and lock kinds that take names directly. */
public final class LockNames {

    private LockNames() {
    }

    /**
     * @param name a lock name
     * @return {@code name}, when it is non-empty and at most {@value LockClient#MAX_NAME_BYTES} UTF-8 bytes
     * @throws NullPointerException     naming {@code name} when it is null
     * @throws IllegalArgumentException naming {@code name} when it is empty or too long
     */
    public static String check(String name) {
        return check(name, "name");
    }

    /**
     * @param value    a lock-name-like value
     * @param argument the argument name for messages (e.g. {@code "queue"})
     * @return {@code value}, when it is non-empty and at most {@value LockClient#MAX_NAME_BYTES} UTF-8 bytes
     * @throws NullPointerException     naming the argument when it is null
     * @throws IllegalArgumentException naming the argument when it is empty or too long
     */
    public static String check(String value, String argument) {
        Objects.requireNonNull(value, argument);
        if (value.isEmpty()) {
            throw new IllegalArgumentException(argument + " must not be empty");
        }
        int bytes = utf8Length(value);
        if (bytes > LockClient.MAX_NAME_BYTES) {
            throw new IllegalArgumentException(argument + " must be at most " + LockClient.MAX_NAME_BYTES
                    + " UTF-8 bytes, was " + bytes);
        }
        return value;
    }

    /**
     * @param s a string
     * @return its length in UTF-8 bytes, counting a lone surrogate as 3
     */
    public static int utf8Length(CharSequence s) {
        int n = 0;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }
}
