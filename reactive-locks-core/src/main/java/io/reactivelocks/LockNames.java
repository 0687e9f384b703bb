package io.reactivelocks;

import java.util.Base64;
import java.util.Objects;

/**
 * The lock-name rules every store and lock kind applies: a name is any non-empty string of at most
 * {@value LockClient#MAX_NAME_BYTES} UTF-8 bytes, a lone surrogate counting three bytes. Also the
 * encodings stores share: the bytes of a name ({@link #utf8}, lone surrogates kept apart) and their
 * unpadded base64url, one path segment with no {@code '/'} or {@code '.'} ({@link #base64url}).
 */
public final class LockNames {

    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder BASE64URL_DECODER = Base64.getUrlDecoder();

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
        if (value.length() <= LockClient.MAX_NAME_BYTES / 3) {
            return value; // every UTF-16 unit takes at most 3 bytes (a surrogate pair 4 for its two): short enough uncounted
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
     * The inverse of {@link #utf8}: a three-byte sequence of a surrogate comes back as that lone
     * surrogate.
     *
     * @param bytes generalized UTF-8, as made by {@link #utf8}
     * @return the string
     * @throws IllegalArgumentException when a sequence is cut short
     */
    public static String fromUtf8(byte[] bytes) {
        StringBuilder out = new StringBuilder(bytes.length);
        for (int i = 0; i < bytes.length; ) {
            int b0 = bytes[i] & 0xFF;
            int n = b0 < 0x80 ? 1 : b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
            if (i + n > bytes.length) {
                throw new IllegalArgumentException("truncated UTF-8 sequence at byte " + i);
            }
            int cp = n == 1 ? b0 : n == 2 ? b0 & 0x1F : n == 3 ? b0 & 0x0F : b0 & 0x07;
            for (int k = 1; k < n; k++) {
                cp = (cp << 6) | (bytes[i + k] & 0x3F);
            }
            out.appendCodePoint(cp); // a surrogate code point comes back as the lone char it was
            i += n;
        }
        return out.toString();
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

    /**
     * A name as one path segment: the unpadded base64url of its {@link #utf8} bytes. The alphabet
     * ({@code A-Z a-z 0-9 - _}) has no {@code '/'} and no {@code '.'}, and the encoding is
     * injective, so every name is exactly one segment of its own; a
     * {@value LockClient#MAX_NAME_BYTES}-byte name gives 1366 characters.
     *
     * @param name a string
     * @return its unpadded base64url
     */
    public static String base64url(String name) {
        return BASE64URL.encodeToString(utf8(name));
    }

    /**
     * The inverse of {@link #base64url}.
     *
     * @param segment a string made by {@link #base64url}
     * @return the name it encodes, lone surrogates included
     * @throws IllegalArgumentException when {@code segment} is not base64url of generalized UTF-8
     */
    public static String fromBase64url(String segment) {
        return fromUtf8(BASE64URL_DECODER.decode(segment));
    }
}
