package io.reactivelocks.r2dbc;

import io.r2dbc.spi.ConnectionFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The SQL dialects this module writes statements for, and the little that differs between them in
 * the statements of {@link FencedWrites}: how a bind parameter is marked, how an identifier is
 * quoted, and what an {@code UPDATE} reports as its count.
 */
public enum SqlDialect {

    /**
     * PostgreSQL (r2dbc-postgresql): numbered bind markers {@code $1, $2, ...}, identifiers in
     * {@code "double quotes"}; an {@code UPDATE} counts the rows it matched.
     */
    POSTGRESQL,

    /**
     * MariaDB and MySQL (r2dbc-mariadb, r2dbc-mysql): positional bind markers {@code ?}, identifiers in
     * {@code `backticks`}; an {@code UPDATE} may count only the rows it changed (a rewrite of the same
     * values under the same token counts 0).
     */
    MARIADB;

    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]{0,62}");

    /**
     * The dialect of a connection factory, from the name its driver reports
     * ({@code connections.getMetadata().getName()}: {@code PostgreSQL}, {@code MariaDB}, {@code MySQL};
     * a pool reports the name of the factory it pools). Reads no data and opens no connection.
     *
     * @param connections the connection factory
     * @return its dialect
     * @throws NullPointerException     when {@code connections} is null
     * @throws IllegalArgumentException when the driver is not one of these dialects (name the dialect explicitly)
     */
    public static SqlDialect of(ConnectionFactory connections) {
        Objects.requireNonNull(connections, "connections");
        String name = String.valueOf(connections.getMetadata().getName());
        String n = name.toLowerCase(Locale.ROOT);
        if (n.contains("postgres")) {
            return POSTGRESQL;
        }
        if (n.contains("mariadb") || n.contains("mysql")) {
            return MARIADB;
        }
        throw new IllegalArgumentException("connections: no SQL dialect known for the R2DBC driver '" + name
                + "'; pass one of " + Arrays.toString(values()) + " explicitly");
    }

    /**
     * @param index the parameter's position in the statement, from 0
     * @return its bind marker: {@code $index+1} or {@code ?}
     */
    String bindMarker(int index) {
        return this == POSTGRESQL ? "$" + (index + 1) : "?";
    }

    /**
     * @return whether an {@code UPDATE} may report 0 for a row it matched but left as it was
     */
    boolean countsChangedRowsOnly() {
        return this == MARIADB;
    }

    /**
     * @param identifier a checked identifier
     * @return it quoted as this dialect writes it
     */
    String quote(String identifier) {
        String id = check(identifier, "identifier");
        return this == POSTGRESQL ? '"' + id + '"' : '`' + id + '`';
    }

    /**
     * Checks a name that is written into SQL text (identifiers cannot be bound): a letter or
     * underscore, then letters, digits or underscores, at most 63 characters — a plain identifier in
     * every dialect, always written quoted, so case is kept and reserved words are harmless.
     *
     * @param value    the identifier
     * @param argument the argument's name, for the message
     * @return {@code value}
     * @throws NullPointerException     when {@code value} is null
     * @throws IllegalArgumentException when it is not such an identifier
     */
    static String check(String value, String argument) {
        Objects.requireNonNull(value, argument);
        if (!IDENTIFIER.matcher(value).matches()) {
            String shown = value.length() > 80 ? value.substring(0, 80) + "..." : value;
            throw new IllegalArgumentException(argument + " must be an SQL identifier matching [a-zA-Z_][a-zA-Z0-9_]{0,62},"
                    + " was '" + shown.replaceAll("\\p{Cntrl}", "?") + "'");
        }
        return value;
    }
}
