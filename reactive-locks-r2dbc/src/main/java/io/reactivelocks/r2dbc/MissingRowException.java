package io.reactivelocks.r2dbc;

import io.reactivelocks.LockException;
import java.util.Objects;

/**
 * A {@link FencedWrites} write found no row with the key: nothing was written, and nothing was
 * refused either — the row is the application's to create (with a plain {@code INSERT}, or an
 * upsert that carries the fence), the helper never inserts one.
 */
public final class MissingRowException extends LockException {

    private static final long serialVersionUID = 1L;

    private final String table;
    private final String key;

    /**
     * @param table the table, as written in the statement (schema-qualified when a schema was given)
     * @param key   the key that matched no row, as text
     * @throws NullPointerException when an argument is null
     */
    public MissingRowException(String table, String key) {
        super(null, "fenced write found no row of " + Objects.requireNonNull(table, "table") + " with key "
                + Objects.requireNonNull(key, "key"), null);
        this.table = table;
        this.key = key;
    }

    /** @return the table, schema-qualified when a schema was given */
    public String table() {
        return table;
    }

    /** @return the key that matched no row, as text */
    public String key() {
        return key;
    }
}
