package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.fencing.FencedValues;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.window.WindowLock;
import io.reactivelocks.test.server.PostgresServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The schema modes against a role without the {@code CREATE} privilege (as every non-owner on
 * PostgreSQL 15's {@code public} schema), each test in a fresh database of its own: the DDL file
 * applied by the superuser makes the store work in {@link SchemaMode#VALIDATE}; validation names
 * exactly what is missing; {@link SchemaMode#CREATE} fails naming the option instead of a bare
 * "permission denied".
 */
class PostgresSchemaModeTest {

    /** Bound of the superuser's statements: creating and dropping a database copies and removes files. */
    private static final Duration ADMIN = Duration.ofSeconds(60);

    private PostgresServer pg;
    private String database;
    private String role;
    private ConnectionFactory superuser;
    private ConnectionFactory app;

    @BeforeEach
    void freshDatabaseAndRoleWithoutCreate() {
        pg = PostgresTestSupport.shared();
        String id = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        database = "schema_mode_" + id;
        role = "schema_app_" + id;
        ConnectionFactory admin = PostgresTestSupport.factory(pg);
        PostgresTestSupport.exec(admin, "CREATE DATABASE " + database, ADMIN);
        PostgresTestSupport.exec(admin, "CREATE ROLE " + role + " LOGIN PASSWORD 'app'", ADMIN);
        superuser = factory(pg.username(), pg.password());
        // PostgreSQL 15 revokes it already; said here so that the test means the same on any version
        PostgresTestSupport.exec(superuser, "REVOKE CREATE ON SCHEMA public FROM PUBLIC", ADMIN);
        app = factory(role, "app");
    }

    @AfterEach
    void dropDatabaseAndRole() {
        ConnectionFactory admin = PostgresTestSupport.factory(pg);
        PostgresTestSupport.exec(admin, "DROP DATABASE IF EXISTS " + database + " WITH (FORCE)", ADMIN);
        PostgresTestSupport.exec(admin, "DROP ROLE IF EXISTS " + role, ADMIN);
    }

    @Test
    void theDdlFileAppliedByTheSuperuserLetsARoleWithoutCreateWorkInValidateMode() throws IOException {
        PostgresTestSupport.exec(superuser, PostgresDdlFile.read(), ADMIN);
        PostgresTestSupport.exec(superuser, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role
                + "; GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO " + role);
        assertThatThrownBy(() -> PostgresTestSupport.exec(app, "CREATE TABLE public.not_allowed (i integer)"))
                .as("the application's role may not create").hasMessageContaining("permission denied");

        // tag::schema-mode-validate[]
        PostgresLockOptions options = PostgresLockOptions.builder().schemaMode(SchemaMode.VALIDATE).build();
        PostgresLockBackend backend = PostgresLockBackend.create(app, options);   // creates nothing
        Mono<Void> checked = backend.validateSchema();       // fails naming every missing object, if any
        // end::schema-mode-validate[]
        PostgresLockStore session = PostgresLocks.connect(backend);
        LockClient locks = session.locks(LockOptions.defaults());
        Semaphore semaphore = session.semaphores(LockOptions.defaults());
        PostgresTaskQueue tasks = session.taskQueue(LockOptions.defaults());
        FencedValues values = session.fencedValues();
        LockClient fair = session.fairLocks(LockOptions.defaults());
        ReadWriteLock rw = session.readWriteLocks(ReadWriteLockOptions.defaults());
        WindowLock windows = session.windowLocks(LockOptions.defaults());
        try {
            StepVerifier.create(checked).expectComplete().verify(TIMEOUT);

            StepVerifier.create(locks.withLock("order:1", lease -> Mono.just(lease.token())))
                    .assertNext(token -> assertThat(token).isPositive()).expectComplete().verify(TIMEOUT);

            StepVerifier.create(semaphore.withPermit("pool", 2, lease -> Mono.just(lease.token())))
                    .assertNext(token -> assertThat(token).isPositive()).expectComplete().verify(TIMEOUT);

            StepVerifier.create(tasks.register("jobs", "job-1", 0)).expectNext(true).expectComplete().verify(TIMEOUT);
            StepVerifier.create(tasks.tryCapture("jobs", 1).concatMap(tasks::complete))
                    .expectNext(true).expectComplete().verify(TIMEOUT);

            long token = locks.withLock("fenced", lease -> Mono.just(lease.token())).block(TIMEOUT);
            StepVerifier.create(values.write("k", token, "v1")).expectNext(true).expectComplete().verify(TIMEOUT);
            StepVerifier.create(values.read("k")).assertNext(v -> assertThat(v.value()).isEqualTo("v1"))
                    .expectComplete().verify(TIMEOUT);

            StepVerifier.create(fair.withLock("fair", lease -> Mono.just(lease.token())))
                    .assertNext(t -> assertThat(t).isPositive()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(rw.write().withLock("catalog", lease -> Mono.just(lease.token())))
                    .assertNext(t -> assertThat(t).isPositive()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(windows.tryClaim("nightly", Duration.ofHours(1)))
                    .assertNext(c -> assertThat(c.token()).isPositive()).expectComplete().verify(TIMEOUT);
        } finally {
            session.close().block(TIMEOUT); // every concept it handed out, then the backend
        }
        assertThat(PostgresTestSupport.sql(superuser, "SELECT count(*) AS n FROM pg_catalog.pg_class c"
                + " JOIN pg_catalog.pg_roles r ON r.oid = c.relowner WHERE r.rolname = $1", role).get(0).get("n"))
                .as("objects created by the application's role").isEqualTo(0L);
    }

    @Test
    void validateModeOnAnEmptyDatabaseNamesEveryMissingObjectAndTheOption() {
        PostgresLockBackend backend = PostgresLockBackend.create(app, validate());
        LockClient locks = LockClient.create(backend, LockOptions.defaults());
        try {
            List<String> expected = StoreSchema.expected(PostgresLockOptions.defaults()).objects().stream()
                    .filter(o -> !o.kind().equals("column")) // a missing table's columns are not listed
                    .map(ExpectedSchema.SchemaObject::label).toList();
            StepVerifier.create(backend.validateSchema()).expectErrorSatisfies(e -> {
                assertThat(e).isInstanceOf(PostgresSchemaException.class);
                PostgresSchemaException s = (PostgresSchemaException) e;
                assertThat(s.missingObjects()).containsExactlyElementsOf(expected);
                assertThat(s.schemaMode()).isEqualTo(SchemaMode.VALIDATE);
                assertThat(s.isTransient()).isFalse();
                assertThat(e.getMessage()).contains("PostgresLockOptions.schemaMode", "docs/ddl/postgresql.sql",
                        "table public.reactive_locks\n", "function public.reactive_locks_permits_grant",
                        "index public.reactive_lock_tasks_ready_idx", "sequence public.reactive_locks_token_seq");
            }).verify(TIMEOUT);

            // first use checks only what the concept needs: the lock schema, not the semaphore's
            StepVerifier.create(locks.tryAcquire("order:1")).expectErrorSatisfies(e -> {
                assertThat(e).isInstanceOf(PostgresSchemaException.class);
                assertThat(((PostgresSchemaException) e).missingObjects()).contains("table public.reactive_locks",
                        "function public.reactive_locks_notify").noneMatch(o -> o.contains("permits") || o.contains("tasks"));
            }).verify(TIMEOUT);
        } finally {
            locks.close().block(TIMEOUT);
        }
        assertThat(PostgresTestSupport.sql(superuser, "SELECT count(*) AS n FROM pg_catalog.pg_class c"
                + " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'").get(0).get("n"))
                .as("nothing created").isEqualTo(0L);
    }

    @Test
    void validateModeNamesExactlyTheMissingColumnIndexAndFunctionOfAnOtherwiseCompleteSchema() throws IOException {
        PostgresTestSupport.exec(superuser, PostgresDdlFile.read(), ADMIN);
        PostgresTestSupport.exec(superuser, "ALTER TABLE public.reactive_locks DROP COLUMN payload;"
                + " DROP INDEX public.reactive_locks_waiters_seq_idx;"
                + " DROP FUNCTION public.reactive_locks_permits_grant(text, text[], integer, bigint, text, text)");
        PostgresLockBackend backend = PostgresLockBackend.create(app, validate());
        try {
            StepVerifier.create(backend.validateSchema()).expectErrorSatisfies(e -> assertThat(
                    ((PostgresSchemaException) e).missingObjects()).containsExactly("column public.reactive_locks.payload",
                    "index public.reactive_locks_waiters_seq_idx", "function public.reactive_locks_permits_grant"))
                    .verify(TIMEOUT);
        } finally {
            backend.close().block(TIMEOUT);
        }
    }

    @Test
    void validateModeNamesThePrivilegesTheRoleLacksOnceEveryObjectExists() throws IOException {
        PostgresTestSupport.exec(superuser, PostgresDdlFile.read(), ADMIN);
        PostgresTestSupport.exec(superuser, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + role
                + "; REVOKE EXECUTE ON FUNCTION public.reactive_locks_watch(text[], text, bigint) FROM PUBLIC", ADMIN);
        PostgresLockBackend backend = PostgresLockBackend.create(app, validate());
        LockClient locks = LockClient.create(backend, LockOptions.defaults());
        try {
            StepVerifier.create(backend.validateSchema()).expectErrorSatisfies(e -> {
                assertThat(e).isInstanceOf(PostgresSchemaException.class);
                List<String> lacking = ((PostgresSchemaException) e).missingObjects();
                assertThat(lacking).allMatch(l -> l.startsWith("privilege ")).contains(
                        "privilege DELETE, INSERT, UPDATE on table public.reactive_locks",
                        "privilege DELETE, INSERT, UPDATE on table public.reactive_lock_tasks",
                        "privilege USAGE on sequence public.reactive_locks_token_seq",
                        "privilege EXECUTE on function public.reactive_locks_watch")
                        .noneMatch(l -> l.contains("schema public") || l.contains("reactive_locks_notify"));
                assertThat(e.getMessage()).contains("\"" + role + "\" lacks privileges", "PostgresLockOptions.schemaMode",
                        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \"public\" TO \"" + role + "\"");
            }).verify(TIMEOUT);
            StepVerifier.create(locks.tryAcquire("order:1")).expectErrorSatisfies(e -> assertThat(
                    ((PostgresSchemaException) e).missingObjects()).contains("privilege EXECUTE on function public.reactive_locks_watch"))
                    .verify(TIMEOUT);

            PostgresTestSupport.exec(superuser, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role
                    + "; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO " + role
                    + "; GRANT EXECUTE ON FUNCTION public.reactive_locks_watch(text[], text, bigint) TO " + role, ADMIN);
            StepVerifier.create(backend.validateSchema()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(locks.withLock("order:1", lease -> Mono.just(lease.token())))
                    .assertNext(token -> assertThat(token).isPositive()).expectComplete().verify(TIMEOUT);
        } finally {
            locks.close().block(TIMEOUT);
        }
    }

    @Test
    void createModeWithoutTheCreatePrivilegeFailsNamingTheSchemaModeOption() {
        PostgresLockBackend backend = PostgresLockBackend.create(app, PostgresLockOptions.builder().poolMaxSize(2).build());
        LockClient locks = LockClient.create(backend, LockOptions.defaults());
        LockStore semaphores = PostgresLocks.connect(app, PostgresLockOptions.builder().poolMaxSize(2).build());
        Semaphore semaphore = semaphores.semaphores(LockOptions.defaults());
        try {
            StepVerifier.create(locks.tryAcquire("order:1")).expectErrorSatisfies(e -> {
                assertThat(e).isInstanceOf(PostgresSchemaException.class);
                assertThat(((LockBackendException) e).isTransient()).isFalse();
                assertThat(((PostgresSchemaException) e).schemaMode()).isEqualTo(SchemaMode.CREATE);
                assertThat(e.getMessage()).contains("42501", "PostgresLockOptions.schemaMode", "SchemaMode.VALIDATE",
                        "docs/ddl/postgresql.sql");
            }).verify(TIMEOUT);
            StepVerifier.create(semaphore.tryAcquire("pool", 2)).expectErrorSatisfies(e ->
                    assertThat(e).isInstanceOf(PostgresSchemaException.class).hasMessageContaining("PostgresLockOptions.schemaMode"))
                    .verify(TIMEOUT);
        } finally {
            semaphores.close().block(TIMEOUT);
            locks.close().block(TIMEOUT);
        }
    }

    @Test
    void noneModeChecksNothingAndCreatesNothing() {
        PostgresLockBackend backend = PostgresLockBackend.create(app,
                PostgresLockOptions.builder().schemaMode(SchemaMode.NONE).poolMaxSize(2).build());
        LockClient locks = LockClient.create(backend, LockOptions.defaults());
        try {
            StepVerifier.create(locks.tryAcquire("order:1")).expectErrorSatisfies(e -> assertThat(e)
                    .isNotInstanceOf(PostgresSchemaException.class).hasMessageContaining("42P01")).verify(TIMEOUT);
        } finally {
            locks.close().block(TIMEOUT);
        }
    }

    @Test
    void aNullSchemaModeIsRejectedNamingTheArgument() {
        assertThatThrownBy(() -> PostgresLockOptions.builder().schemaMode(null))
                .isInstanceOf(NullPointerException.class).hasMessage("schemaMode");
        assertThat(PostgresLockOptions.builder().createSchemaOnFirstUse(false).build().schemaMode()).isEqualTo(SchemaMode.NONE);
        assertThat(PostgresLockOptions.defaults().schemaMode()).isEqualTo(SchemaMode.CREATE);
    }

    private static PostgresLockOptions validate() {
        return PostgresLockOptions.builder().schemaMode(SchemaMode.VALIDATE).poolMaxSize(2)
                .connectTimeout(Duration.ofSeconds(10)).build();
    }

    private ConnectionFactory factory(String user, String password) {
        return new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                .host(pg.host())
                .port(pg.port())
                .username(user)
                .password(password)
                .database(database)
                .connectTimeout(Duration.ofSeconds(3))
                .applicationName("reactive-locks-test")
                .build());
    }
}
