package io.reactivelocks.internal;

import io.reactivelocks.LockClient;
import java.util.Objects;

/** Checks lock names at call time. */
final class Names {

    private Names() {
    }

    static String check(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("name must not be empty");
        }
        int bytes = utf8Length(name);
        if (bytes > LockClient.MAX_NAME_BYTES) {
            throw new IllegalArgumentException("name must be at most " + LockClient.MAX_NAME_BYTES
                    + " UTF-8 bytes, was " + bytes);
        }
        return name;
    }

    static int utf8Length(CharSequence s) {
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
