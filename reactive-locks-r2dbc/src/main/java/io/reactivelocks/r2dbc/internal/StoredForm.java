package io.reactivelocks.r2dbc.internal;

/**
 * The stored form of lock names, owner ids and payloads, shared by the SQL dialects. A lone UTF-16
 * surrogate cannot be encoded as UTF-8, yet it is valid in a Java string and in a lock name, so the
 * stored form escapes exactly those, plus the escape character itself — and NUL where the column
 * type cannot hold it (PostgreSQL {@code text}; MariaDB's binary columns can): {@code \} becomes
 * {@code \\}, NUL {@code \0}, a lone surrogate {@code \}{@code uXXXX}. Every other name is stored
 * unchanged, so the tables stay readable. The mapping is injective (distinct names never share a
 * row) and at most doubles the UTF-8 length. Not API: the dialect packages' code.
 */
public final class StoredForm {

    /** For PostgreSQL {@code text} columns: NUL is escaped. */
    public static final StoredForm TEXT = new StoredForm(true);
    /** For binary ({@code VARBINARY}) columns holding UTF-8: NUL is stored as it is. */
    public static final StoredForm BINARY = new StoredForm(false);

    private final boolean escapeNul;

    private StoredForm(boolean escapeNul) {
        this.escapeNul = escapeNul;
    }

    /**
     * @param s a name, owner id or payload
     * @return its stored form
     */
    public String encode(String s) {
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
            } else if (c == 0 && escapeNul) {
                b.append("\\0");
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

    /**
     * @param s a stored form ({@code \0} is read as NUL in both forms: {@link #encode} of the binary form never
     *          writes it, a stored backslash being {@code \\})
     * @return the string it is the stored form of
     */
    public String decode(String s) {
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
            if (e == '0') {
                b.append('\0');
            } else if (e == 'u' && i + 4 < s.length()) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                i += 4;
            } else {
                b.append(e);
            }
        }
        return b.toString();
    }

    /**
     * @param prefix a name prefix to scan stored names for
     * @return the prefix without a trailing high surrogate: alone it is stored escaped, while the
     *         names it starts keep the pair as it is (the caller compares literally afterwards)
     */
    public static String scanPrefix(String prefix) {
        int n = prefix.length();
        return n > 0 && Character.isHighSurrogate(prefix.charAt(n - 1)) ? prefix.substring(0, n - 1) : prefix;
    }

    private boolean special(String s, int i) {
        char c = s.charAt(i);
        return c == '\\' || (c == 0 && escapeNul) || (Character.isSurrogate(c) && !paired(s, i));
    }

    private static boolean paired(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }
}
