package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.r2dbc.internal.StoredForm;
import java.nio.charset.StandardCharsets;

/**
 * The stored form of lock names, owner ids and payloads: {@code VARBINARY} columns holding UTF-8, in
 * the escaping both SQL dialects share ({@link StoredForm#BINARY}: NUL
 * is stored as it is, binary columns hold it). Binary columns also compare byte for byte: no
 * collation folds case or pads trailing spaces.
 */
final class StoredText {

    private static final StoredForm FORM = StoredForm.BINARY;

    private StoredText() {
    }

    static String encode(String s) {
        return FORM.encode(s);
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
        return FORM.decode(s);
    }
}
