package io.reactivelocks.r2dbc.postgresql;

import io.reactivelocks.r2dbc.SchemaMode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code docs/ddl/postgresql.sql}: the whole schema of the PostgreSQL store with the default names,
 * generated from the templates the store runs ({@link StoreSchema}). {@link #main} writes it;
 * {@link PostgresDdlFileTest} fails when the file differs from what the templates give.
 */
final class PostgresDdlFile {

    /** The command that rewrites the file (the test writes it when {@code reactive-locks.ddl.write} is true). */
    static final String REGENERATE = "./mvnw -B -ntp -o -q -pl reactive-locks-r2dbc -am verify -Dtest=PostgresDdlFileTest"
            + " -Dsurefire.failIfNoSpecifiedTests=false -Djacoco.skip=true -Dreactive-locks.ddl.write=true";

    private static final String HEADER = """
            -- reactive-locks: the whole PostgreSQL schema (locks, window locks, fair locks, semaphores,
            -- read-write locks, task queue, fenced values) with the default names: schema public, lock
            -- table reactive_locks (the other tables' names derive from it), sequence
            -- reactive_locks_token_seq, window table reactive_lock_windows, task table reactive_lock_tasks.
            --
            -- For databases where the application's role may not create objects. Run it as a role that
            -- may (idempotent; safe to run again after an upgrade):
            --   psql -v ON_ERROR_STOP=1 -d app -f postgresql.sql
            -- give the application's role the data privileges:
            --   GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app;
            --   GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO app;
            -- and run the application with PostgresLockOptions.schemaMode(SchemaMode.VALIDATE)
            -- (Spring Boot: reactive-locks.postgres.schema-mode=validate).
            --
            -- GENERATED from the SQL templates in reactive-locks-r2dbc/src/main/resources/io/reactivelocks/r2dbc/postgresql;
            -- do not edit. Regenerate with:
            --   %s
            """.formatted(REGENERATE);

    private PostgresDdlFile() {
    }

    /** @return the file, from the module directory (where the tests run) or from the repository root */
    static Path path() {
        Path fromModule = Path.of("..", "docs", "ddl", "postgresql.sql");
        return Files.isDirectory(Path.of("..", "docs")) ? fromModule : Path.of("docs", "ddl", "postgresql.sql");
    }

    /** @return the file's text as the templates give it */
    static String generate() {
        return StoreSchema.ddl(PostgresLockOptions.defaults(), HEADER);
    }

    /** @return the file's text as it is on disk, or empty when there is no file */
    static String read() throws IOException {
        Path file = path();
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    }

    /** Writes the file. */
    static void write() throws IOException {
        Path file = path();
        Files.createDirectories(file.getParent());
        Files.writeString(file, generate(), StandardCharsets.UTF_8);
    }

    /**
     * Writes {@code docs/ddl/postgresql.sql}.
     *
     * @param args none
     * @throws IOException when the file cannot be written
     */
    public static void main(String[] args) throws IOException {
        write();
        System.out.println("wrote " + path().toAbsolutePath().normalize());
    }
}
