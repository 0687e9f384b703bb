package io.reactivelocks.spring.boot;

import java.util.List;

/**
 * The store's schema misses objects and {@code reactive-locks.postgres.schema-mode} is {@code validate}: thrown by the
 * startup check, reported by {@link IncompleteSchemaFailureAnalyzer} with the missing objects first.
 */
final class IncompleteSchemaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The property whose value made the store check instead of create. */
    static final String PROPERTY = ReactiveLocksProperties.PREFIX + ".postgres.schema-mode";

    private final List<String> missingObjects;

    /**
     * @param missingObjects the missing objects, each as {@code kind schema.name}, or (all there) the missing privileges
     * @param cause          the store's report ({@code PostgresSchemaException}; not named here, so that this class
     *                       loads without the PostgreSQL module, as its failure analyzer always is)
     */
    IncompleteSchemaException(List<String> missingObjects, RuntimeException cause) {
        super(PROPERTY + " is validate and the PostgreSQL schema of reactive-locks misses: " + String.join(", ", missingObjects),
                cause);
        this.missingObjects = List.copyOf(missingObjects);
    }

    /** @return the missing objects, each as {@code kind schema.name}, or the missing privileges ({@code privilege X on kind schema.name}) */
    List<String> missingObjects() {
        return missingObjects;
    }
}
