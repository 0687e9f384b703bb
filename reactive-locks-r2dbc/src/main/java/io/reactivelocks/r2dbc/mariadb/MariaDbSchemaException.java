package io.reactivelocks.r2dbc.mariadb;

import io.reactivelocks.LockBackendException;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The MariaDB store's objects are not as it needs them: thrown by
 * {@link MariaDbLockBackend#validateSchema()} and by a concept's first operation in
 * {@link io.reactivelocks.r2dbc.SchemaMode#VALIDATE}, naming every missing table or sequence. Not
 * transient: create them ({@code docs/stores/mariadb.md}, or {@link MariaDbLockBackend#migrate()}).
 */
public final class MariaDbSchemaException extends LockBackendException {

    private static final long serialVersionUID = 1L;

    private final List<String> missing;

    private MariaDbSchemaException(String message, List<String> missing) {
        super(null, message, null, false);
        this.missing = List.copyOf(missing);
    }

    static MariaDbSchemaException missing(String concept, @Nullable String database, List<String> missing) {
        return new MariaDbSchemaException("the MariaDB objects of the " + concept + " are missing in "
                + (database == null ? "the connection's database" : "database " + database) + ": " + String.join(", ", missing)
                + " (create them with MariaDbLockBackend.migrate(), or use SchemaMode.CREATE)", missing);
    }

    /** @return the names of the missing tables and sequences */
    public List<String> missingObjects() {
        return missing;
    }
}
