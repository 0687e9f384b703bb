package io.reactivelocks.internal;

import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockNames;
import java.util.Objects;

/**
 * The rules of a lock payload: at most {@link LockOptions#MAX_PAYLOAD_BYTES} UTF-8 bytes and
 * well-formed UTF-16, so that every store keeps it as the same text. Not API.
 */
public final class Payloads {

    private Payloads() {
    }

    /**
     * @param payload  a payload, not null
     * @param argument the argument name for messages
     * @return {@code payload}
     * @throws NullPointerException     naming the argument when it is null
     * @throws IllegalArgumentException naming the argument when it is too long or has a lone surrogate
     */
    public static String check(String payload, String argument) {
        Objects.requireNonNull(payload, argument);
        for (int i = 0, n = payload.length(); i < n; i++) {
            char c = payload.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(payload.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(argument + " must be well-formed UTF-16, has a lone surrogate at index " + i);
            }
        }
        int bytes = LockNames.utf8Length(payload);
        if (bytes > LockOptions.MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException(argument + " must be at most " + LockOptions.MAX_PAYLOAD_BYTES
                    + " UTF-8 bytes, was " + bytes);
        }
        return payload;
    }
}
