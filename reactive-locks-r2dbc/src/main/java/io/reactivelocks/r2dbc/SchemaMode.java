package io.reactivelocks.r2dbc;

/**
 * What a SQL store does about its tables (and sequence) before the first operation of each
 * concept. A store's {@code migrate()} and {@code validateSchema()} do what they say in every mode.
 */
public enum SchemaMode {

    /**
     * Checks whether the concept's objects exist and creates the missing ones (the default). Needs
     * the privilege to create them only while something is missing.
     */
    CREATE,

    /**
     * Creates nothing: checks that the concept's objects exist and fails its first operation with an
     * error naming every missing one. For a user without {@code CREATE}, with the schema made from the
     * store's DDL file.
     */
    VALIDATE,

    /** Creates nothing and checks nothing: a missing object fails the statements that use it. */
    NONE
}
