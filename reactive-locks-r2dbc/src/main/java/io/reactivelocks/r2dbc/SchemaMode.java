package io.reactivelocks.r2dbc;

/**
 * What a SQL store (PostgreSQL, MariaDB) does about its tables, sequence, indexes and functions
 * before the first operation of each concept ({@code PostgresLockOptions.Builder#schemaMode},
 * {@code MariaDbLockOptions.Builder#schemaMode}). A store's {@code migrate()} and
 * {@code validateSchema()} do what they say in every mode.
 */
public enum SchemaMode {

    /**
     * Checks whether the concept's objects exist and creates the missing ones (the default). Needs
     * the privilege to create them only while something is missing.
     */
    CREATE,

    /**
     * Creates nothing: checks that the concept's objects exist and fails its first operation with an
     * error naming every missing one ({@code PostgresSchemaException}, {@code MariaDbSchemaException}).
     * For a user without {@code CREATE}, with the schema made from the store's DDL file
     * ({@code docs/ddl/postgresql.sql} for PostgreSQL).
     */
    VALIDATE,

    /** Creates nothing and checks nothing: a missing object fails the statements that use it. */
    NONE
}
