package io.reactivelocks.r2dbc.mariadb;

import java.nio.charset.StandardCharsets;

/**
 * The stored form of lock names, owner ids and payloads: {@code VARBINARY} columns holding UTF-8.
 * A lone UTF-16 surrogate cannot be encoded as UTF-8, yet it is valid in a Java string and in a lock
 * name, so the stored form escapes exactly those, plus the escape character itself: {@code \}
 * becomes {@code \\} and a lone surrogate becomes {@code \}{@code uXXXX}. Every other name is stored
 * unchanged (NUL included: binary columns hold it), so the table stays readable. The mapping is
 * injective (distinct names never share a row) and at most doubles the UTF-8 length. Binary columns
 * also compare byte for byte: no collation folds case or pads trailing spaces.
 */
final class StoredText {

    private StoredText() {
    }

    static String encode(String s) {
        int i = 0;
        int n = s.length();
        while (i < n && !special(s, i)) {
            i++;
        }
        if (i == n) {
            return s;
        }
        StringBuilder b = new StringBuilder(n + 16).append(s, 0, i);
        for (; i < n; i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                b.append("\\\\");
            } else if (Character.isSurrogate(c) && !paired(s, i)) {
                b.append(String.format("\\u%04X", (int) c));
            } else if (Character.isHighSurrogate(c)) {
                b.append(c).append(s.charAt(++i));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** @return the UTF-8 bytes of the stored form, what is bound to the binary columns */
    static byte[] bytes(String s) {
        return encode(s).getBytes(StandardCharsets.UTF_8);
    }

    /** @return the string whose stored form {@code stored} (UTF-8 bytes) is */
    static String decode(byte[] stored) {
        return decode(new String(stored, StandardCharsets.UTF_8));
    }

    static String decode(String s) {
        int first = s.indexOf('\\');
        if (first < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length()).append(s, 0, first);
        for (int i = first; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) {
                b.append(c);
                continue;
            }
            char e = s.charAt(++i);
            if (e == 'u' && i + 4 < s.length()) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                i += 4;
            } else {
                b.append(e);
            }
        }
        return b.toString();
    }

    private static boolean special(String s, int i) {
        char c = s.charAt(i);
        return c == '\\' || (Character.isSurrogate(c) && !paired(s, i));
    }

    private static boolean paired(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }
}
