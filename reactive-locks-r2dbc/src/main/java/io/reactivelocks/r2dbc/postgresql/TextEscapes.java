package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.internal.StoredForm;

/**
 * The escaping of lock names, owner ids and other strings stored in {@code text} columns, which
 * cannot hold NUL: {@link StoredForm#TEXT} (shared with the MariaDB dialect, which differs in NUL only).
 * A 1024-byte name stays under 2048 bytes, well within a b-tree entry.
 */
final class TextEscapes {

    private TextEscapes() {
    }

    static String encode(String s) {
        return StoredForm.TEXT.encode(s);
    }

    static String decode(String s) {
        return StoredForm.TEXT.decode(s);
    }
}
