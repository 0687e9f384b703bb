package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.r2dbc.SchemaMode;
import java.util.List;

/**
 * The PostgreSQL store's schema is not usable as configured: objects are missing in
 * {@link SchemaMode#VALIDATE} ({@link #missingObjects()} names each) — or, all there, the role
 * lacks privileges on them ({@link #missingObjects()} names each) — or creating them in
 * {@link SchemaMode#CREATE} was refused (the role may not create; {@link #missingObjects()} is
 * empty). Never transient: the message says which option to change.
 */
public final class PostgresSchemaException extends LockBackendException {

    private static final long serialVersionUID = 1L;

    /** The builder method whose value decides what the store does about its schema. */
    static final String OPTION = "PostgresLockOptions.schemaMode";

    private final SchemaMode schemaMode;
    private final List<String> missingObjects;

    private PostgresSchemaException(String message, Throwable cause, SchemaMode schemaMode, List<String> missingObjects) {
        super(null, message, cause, false);
        this.schemaMode = schemaMode;
        this.missingObjects = List.copyOf(missingObjects);
    }

    /**
     * @param missing the missing objects, each as {@code kind schema.name} (e.g. {@code table public.reactive_locks})
     * @return the failure of a check in {@link SchemaMode#VALIDATE}
     */
    static PostgresSchemaException missing(List<String> missing) {
        StringBuilder m = new StringBuilder("the PostgreSQL schema of reactive-locks is incomplete (")
                .append(OPTION).append(" is VALIDATE, so nothing is created); missing ")
                .append(missing.size()).append(missing.size() == 1 ? " object:" : " objects:");
        for (String object : missing) {
            m.append("\n  - ").append(object);
        }
        m.append("\nCreate them with docs/ddl/postgresql.sql (or PostgresLockBackend.migrate() as a role that may create),"
                + " or set ").append(OPTION).append("(SchemaMode.CREATE) to let the store create them"
                + " (Spring Boot: reactive-locks.postgres.schema-mode=create)");
        return new PostgresSchemaException(m.toString(), null, SchemaMode.VALIDATE, missing);
    }

    /**
     * @param role    the role that lacks them
     * @param lacking the privileges, each as {@code privilege X, Y on kind schema.name}
     * @param schemas the schemas of the objects, for the example grants
     * @return the failure of a check in {@link SchemaMode#VALIDATE} that found every object but not every privilege
     */
    static PostgresSchemaException lacking(String role, List<String> lacking, List<String> schemas) {
        String to = " TO \"" + role.replace("\"", "\"\"") + "\"";
        StringBuilder m = new StringBuilder("the database role \"").append(role)
                .append("\" lacks privileges on the PostgreSQL schema of reactive-locks (").append(OPTION)
                .append(" is VALIDATE, so nothing is created or granted); missing ").append(lacking.size())
                .append(lacking.size() == 1 ? " privilege:" : " privileges:");
        for (String privilege : lacking) {
            m.append("\n  - ").append(privilege);
        }
        m.append("\nGrant them as the owner of the objects, e.g.");
        for (String schema : schemas) {
            String s = "\"" + schema + "\"";
            m.append(" GRANT USAGE ON SCHEMA ").append(s).append(to).append(';')
                    .append(" GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ").append(s).append(to).append(';')
                    .append(" GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ").append(s).append(to).append(';');
        }
        return new PostgresSchemaException(m.toString(), null, SchemaMode.VALIDATE, lacking);
    }

    /**
     * @param concept what was being created, e.g. "lock"
     * @param cause   the refusal (SQLSTATE 42501), already described
     * @param detail  the description of the cause
     * @return the failure of creating the schema in {@link SchemaMode#CREATE} for lack of privileges
     */
    static PostgresSchemaException creationRefused(String concept, Throwable cause, String detail) {
        String m = "cannot create the PostgreSQL " + concept + " schema of reactive-locks (" + OPTION
                + " is CREATE, the default): " + detail + ". The role may not create objects: have them created from"
                + " docs/ddl/postgresql.sql (or by PostgresLockBackend.migrate() as a role that may) and set " + OPTION
                + "(SchemaMode.VALIDATE) (Spring Boot: reactive-locks.postgres.schema-mode=validate)";
        return new PostgresSchemaException(m, cause, SchemaMode.CREATE, List.of());
    }

    /** @return the mode whose step failed: {@link SchemaMode#VALIDATE} (objects missing) or {@link SchemaMode#CREATE} (creation refused) */
    public SchemaMode schemaMode() {
        return schemaMode;
    }

    /**
     * @return the missing objects, each as {@code kind schema.name} (columns {@code column schema.table.column}); when
     *         none is missing, the missing privileges, each as {@code privilege X, Y on kind schema.name}; empty when
     *         creation was refused
     */
    public List<String> missingObjects() {
        return missingObjects;
    }
}
