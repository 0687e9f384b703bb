package io.reactivelocks.r2dbc.postgresql;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Checks the few names that must be written into SQL text (schema, table, sequence, column and
 * channel names: PostgreSQL cannot bind identifiers as parameters). Only plain identifiers pass —
 * a letter or underscore, then letters, digits or underscores, at most 63 characters
 * ({@code NAMEDATALEN - 1}) — and they are always written double-quoted, so their case is kept
 * and reserved words are harmless. Everything else in a statement is a bind parameter.
 */
final class SqlIdentifiers {

    /** Longest identifier PostgreSQL keeps without truncating it. */
    static final int MAX_LENGTH = 63;

    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]{0,62}");

    private SqlIdentifiers() {
    }

    /**
     * Checks an identifier at call time.
     *
     * @param value    the identifier
     * @param argument the name of the argument, for the message
     * @return {@code value}
     * @throws NullPointerException     when {@code value} is null (the message names the argument)
     * @throws IllegalArgumentException when {@code value} is not {@code [a-zA-Z_][a-zA-Z0-9_]{0,62}}
     */
    static String check(String value, String argument) {
        Objects.requireNonNull(value, argument);
        if (!IDENTIFIER.matcher(value).matches()) {
            throw new IllegalArgumentException(argument + " must be an SQL identifier matching [a-zA-Z_][a-zA-Z0-9_]{0,62},"
                    + " was '" + printable(value) + "'");
        }
        return value;
    }

    /**
     * @param identifier a checked identifier
     * @return the identifier double-quoted, as written into SQL
     */
    static String quote(String identifier) {
        return '"' + check(identifier, "identifier") + '"';
    }

    /**
     * @param schema a checked schema name
     * @param name   a checked object name
     * @return {@code "schema"."name"}
     */
    static String qualified(String schema, String name) {
        return quote(schema) + '.' + quote(name);
    }

    /**
     * Derives an object name from a base name and a suffix, cut so the result stays within
     * {@link #MAX_LENGTH} (PostgreSQL would otherwise truncate it itself, with a notice).
     */
    static String derived(String base, String suffix) {
        int room = MAX_LENGTH - suffix.length();
        return (base.length() > room ? base.substring(0, room) : base) + suffix;
    }

    private static String printable(String value) {
        StringBuilder b = new StringBuilder();
        int limit = Math.min(value.length(), 80);
        for (int i = 0; i < limit; i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return value.length() > limit ? b.append("...").toString() : b.toString();
    }
}
