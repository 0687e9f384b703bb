package io.reactivelocks.etcd;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;

/**
 * The key layout: {@code <prefix>/<name>/<owner>}, where {@code <name>} is the lock name's UTF-8
 * bytes (lone surrogates kept apart, see {@link #utf8}) in unpadded base64url. That alphabet ({@code A-Z a-z 0-9 - _}) has no {@code '/'}, and
 * the encoding is injective, so a name is always exactly one path segment: {@code "a/../b"},
 * {@code "*"} or a NUL byte cannot reach another name's keys, and the range
 * {@code <prefix>/<name>/} holds the keys of that one name and no other. The owner id is the
 * engine's random base64url id; the key's value is the owner id too (UTF-8).
 */
final class EtcdKeys {

    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    private final String prefix;

    /** @param prefix the key prefix without a trailing {@code '/'} (checked by {@link #checkPrefix}) */
    EtcdKeys(String prefix) {
        this.prefix = checkPrefix(prefix);
    }

    /**
     * @param prefix a key prefix
     * @return it, when non-empty and without a trailing {@code '/'}
     */
    static String checkPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("prefix must not be empty");
        }
        if (prefix.endsWith("/")) {
            throw new IllegalArgumentException("prefix must not end with '/' (it is added), was '" + prefix + "'");
        }
        return prefix;
    }

    String prefix() {
        return prefix;
    }

    /** @return {@code <prefix>/}: every key of this backend */
    ByteSequence all() {
        return bytes(prefix + "/");
    }

    /** @return {@code <prefix>/<name>/}: the range of one lock's keys (holder and waiters) */
    ByteSequence lock(String name) {
        return bytes(prefix + "/" + encode(name) + "/");
    }

    /** @return {@code <prefix>/<name>/<owner>}: one owner's key */
    ByteSequence owner(String name, String owner) {
        return bytes(prefix + "/" + encode(name) + "/" + owner);
    }

    /**
     * @param key a key of this layout
     * @return the lock name it belongs to (a lone surrogate reads back as U+FFFD), or {@code null}
     *         when it is not a key of this layout
     */
    String nameOf(ByteSequence key) {
        String k = key.toString(StandardCharsets.UTF_8);
        String head = prefix + "/";
        if (!k.startsWith(head)) {
            return null;
        }
        int slash = k.indexOf('/', head.length());
        if (slash < 0) {
            return null;
        }
        try {
            return new String(DECODER.decode(k.substring(head.length(), slash)), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static String encode(String name) {
        return ENCODER.encodeToString(utf8(name));
    }

    /**
     * UTF-8, except that a lone surrogate is encoded as its own 3-byte sequence (as WTF-8 does)
     * instead of being replaced by {@code '?'}: {@code "\uD800"} and {@code "?"} are two names,
     * so they must be two keys. For every well-formed string this is plain UTF-8.
     */
    static byte[] utf8(String s) {
        byte[] out = new byte[s.length() * 3];
        int n = 0;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i); // a lone surrogate comes back as itself
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
        return java.util.Arrays.copyOf(out, n);
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String string(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }
}
