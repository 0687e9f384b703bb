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
     * The bytes of a name for stores that key by bytes: UTF-8, except that a lone surrogate (a
     * Java string that is not valid UTF-16, yet a valid lock name) becomes its own three-byte
     * sequence, as in WTF-8, instead of {@code '?'}: {@code "\uD800"} and {@code "?"} are two
     * names, so they must be two keys. For every well-formed string this is plain UTF-8; the
     * length is {@link #utf8Length}.
     *
     * @param s a string
     * @return its generalized UTF-8 bytes
     */
    public static byte[] utf8(CharSequence s) {
        byte[] out = new byte[utf8Length(s)];
        int n = 0;
        for (int i = 0, len = s.length(); i < len; ) {
            int cp = Character.codePointAt(s, i); // a lone surrogate comes back as itself
            i += Character.charCount(cp);
            if (cp < 0x80) {
                out[n++] = (byte) cp;
            } else if (cp < 0x800) {
                out[n++] = (byte) (0xC0 | (cp >> 6));
                out[n++] = (byte) (0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                out[n++] = (byte) (0xE0 | (cp >> 12));
                out[n++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (byte) (0x80 | (cp & 0x3F));
            } else {
                out[n++] = (byte) (0xF0 | (cp >> 18));
                out[n++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                out[n++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (byte) (0x80 | (cp & 0x3F));
            }
        }
        return out;
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
