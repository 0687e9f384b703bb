package io.reactivelocks.r2dbc.postgresql;

/**
 * What the PostgreSQL store does about its tables, sequence, indexes and functions before the
 * first operation of each concept ({@link PostgresLockOptions.Builder#schemaMode(SchemaMode)}).
 * {@code migrate()} and {@link PostgresLockBackend#validateSchema()} do what they say in every mode.
 */
public enum SchemaMode {

    /**
     * Checks whether the concept's objects exist and creates the missing ones (the default). Needs
     * the {@code CREATE} privilege on the schema only while something is missing; when creating
     * fails for lack of privileges the error says to switch to {@link #VALIDATE}.
     */
    CREATE,

    /**
     * Creates nothing: checks that the concept's objects exist and fails its first operation with a
     * {@link PostgresSchemaException} naming every missing table, column, index, sequence and
     * function. For a role without {@code CREATE}, with the schema made from {@code docs/ddl/postgresql.sql}.
     */
    VALIDATE,

    /** Creates nothing and checks nothing: a missing object fails the statements that use it. */
    NONE
}
