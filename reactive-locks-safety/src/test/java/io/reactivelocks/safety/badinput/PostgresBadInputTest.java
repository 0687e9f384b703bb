package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static io.reactivelocks.safety.badinput.BadInput.assertBlackholeTimesOutAndLeavesNothingLocked;
import static io.reactivelocks.safety.badinput.BadInput.assertFree;
import static io.reactivelocks.safety.badinput.BadInput.assertRefusedTransiently;
import static io.reactivelocks.safety.badinput.BadInput.backendErrorWithin;
import static io.reactivelocks.safety.badinput.BadInput.closedPort;
import static io.reactivelocks.safety.badinput.BadInput.errorsWithin;
import static io.reactivelocks.safety.badinput.BadInput.rejectedAtCall;
import static io.reactivelocks.safety.badinput.Clients.OPTIONS;
import static org.assertj.core.api.Assertions.assertThat;

import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockBackend;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockStore;
import io.reactivelocks.r2dbc.postgresql.PostgresSchemaException;
import io.reactivelocks.r2dbc.postgresql.PostgresLocks;
import io.reactivelocks.r2dbc.postgresql.PostgresTaskQueue;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.window.WindowLock;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Bad PostgreSQL configurations and a bad PostgreSQL: credentials, database, privileges,
 * identifiers written into SQL, a missing schema, addresses, and the argument checks of the
 * backend options, window lock and task queue. One server for the class, requiring SCRAM
 * passwords over TCP.
 */
class PostgresBadInputTest {

    private static final String PASSWORD = "pw-" + Clients.unique();
    private static final String LIMITED_PASSWORD = "limited-" + Clients.unique();

    private static PostgresServer pg;
    private static PostgresLockBackend goodBackend;
    private static PostgresLockStore goodSession;
    private static LockClient good;
    private static PostgresLockOptions pgOptions;

    private final Clients clients = new Clients();

    @BeforeAll
    static void startServer() {
        pg = PostgresServer.builder().username("app").password(PASSWORD).database("locks").passwordAuthentication(true).start();
        pgOptions = PostgresLockOptions.builder().schema("badinput_" + Clients.unique()).build();
        goodBackend = PostgresLocks.backend(factory("app", PASSWORD, pg.host(), pg.port(), "locks"), pgOptions);
        goodSession = PostgresLocks.connect(goodBackend);
        good = Clients.warm(goodSession.locks(OPTIONS));
        // a role that may log in and use what exists, but may create nothing
        exec(factory("app", PASSWORD, pg.host(), pg.port(), "locks"),
                "CREATE ROLE limited LOGIN PASSWORD '" + LIMITED_PASSWORD + "'; REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
                        + " REVOKE CREATE ON DATABASE locks FROM PUBLIC");
    }

    @AfterAll
    static void stopServer() {
        BadInput.close(good);
        if (goodSession != null) {
            goodSession.close().block(STEP); // and the backend
        }
        pg.close();
    }

    @AfterEach
    void closeClients() {
        clients.close();
    }

    private static PostgresqlConnectionFactory factory(String user, String password, String host, int port, String database) {
        return Clients.pgFactory(host, port, user, password, database);
    }

    private static void exec(PostgresqlConnectionFactory factory, String sql) {
        Flux.usingWhen(factory.create(), c -> Flux.from(c.createStatement(sql).execute()).concatMap(r -> r.getRowsUpdated()),
                Connection::close).blockLast(STEP);
    }

    /**
     * How long the errors a new connection meets (authentication, database, privileges) may take: each
     * call opens one (TCP, startup, SCRAM), which takes more than the 1 s request timeout on a loaded
     * machine; what these tests check is the kind of error, not the speed of a login.
     */
    private static final Duration CONNECT_BOUND = Duration.ofSeconds(5);

    private LockClient lockClient(PostgresqlConnectionFactory factory, PostgresLockOptions options) {
        return clients.postgres(factory, options, OPTIONS.mutate().requestTimeout(CONNECT_BOUND).build());
    }

    // ------------------------------------------------------------------ credentials, database, privileges

    @Test
    void wrongPasswordIsAPermanentErrorThatEndsEvenAnUnboundedWait() {
        LockClient locks = lockClient(factory("app", "wrong", pg.host(), pg.port(), "locks"), pgOptions);
        backendErrorWithin(locks.tryAcquire("wrongpass"), false, CONNECT_BOUND,
                "postgresql failed acquire of lock 'wrongpass'", "[28P01]", "password authentication failed");
        backendErrorWithin(locks.acquire("wrongpass"), false, CONNECT_BOUND, "[28P01]");
        backendErrorWithin(locks.observe("wrongpass"), false, CONNECT_BOUND, "[28P01]");
        assertFree(good, "wrongpass");
    }

    @Test
    void unknownUserIsAPermanentError() {
        LockClient locks = lockClient(factory("nobody", PASSWORD, pg.host(), pg.port(), "locks"), pgOptions);
        backendErrorWithin(locks.tryAcquire("nobody"), false, CONNECT_BOUND, "postgresql failed acquire of lock 'nobody'",
                "[28P01]");
    }

    @Test
    void unknownDatabaseIsAPermanentError() {
        LockClient locks = lockClient(factory("app", PASSWORD, pg.host(), pg.port(), "no_such_db"), pgOptions);
        backendErrorWithin(locks.tryAcquire("nodb"), false, CONNECT_BOUND, "postgresql failed acquire of lock 'nodb'",
                "[3D000]", "no_such_db");
        backendErrorWithin(locks.acquire("nodb"), false, CONNECT_BOUND, "[3D000]");
    }

    @Test
    void roleThatMayNotCreateTheSchemaIsAPermanentError() {
        LockClient locks = lockClient(factory("limited", LIMITED_PASSWORD, pg.host(), pg.port(), "locks"),
                PostgresLockOptions.builder().schema("fresh_" + Clients.unique()).build());
        // a typed error naming the option to change, not a bare "permission denied"
        PostgresSchemaException refused = errorsWithin(locks.tryAcquire("noddl"), PostgresSchemaException.class, CONNECT_BOUND,
                "cannot create the PostgreSQL lock schema", "[42501]", "permission denied",
                "PostgresLockOptions.schemaMode(SchemaMode.VALIDATE)", "docs/ddl/postgresql.sql");
        assertThat(refused.isTransient()).as("transient").isFalse();
        assertThat(errorsWithin(locks.acquire("noddl"), PostgresSchemaException.class, CONNECT_BOUND, "[42501]").isTransient())
                .as("transient").isFalse();
    }

    @Test
    void missingTablesInValidateModeAreAPermanentErrorNamingEachOne() {
        String schema = "unmade_" + Clients.unique();
        LockClient locks = lockClient(factory("app", PASSWORD, pg.host(), pg.port(), "locks"),
                PostgresLockOptions.builder().schema(schema).schemaMode(SchemaMode.VALIDATE).build());
        PostgresSchemaException missing = errorsWithin(locks.tryAcquire("unmade"), PostgresSchemaException.class, CONNECT_BOUND,
                "incomplete", "table " + schema + ".reactive_locks", "function " + schema + ".reactive_locks_notify",
                "PostgresLockOptions.schemaMode");
        assertThat(missing.isTransient()).as("transient").isFalse();
        errorsWithin(locks.acquire("unmade"), PostgresSchemaException.class, CONNECT_BOUND, "table " + schema + ".reactive_locks");
    }

    @Test
    void missingTablesWithSchemaCreationOffIsAPermanentError() {
        String schema = "missing_" + Clients.unique();
        LockClient locks = lockClient(factory("app", PASSWORD, pg.host(), pg.port(), "locks"),
                PostgresLockOptions.builder().schema(schema).createSchemaOnFirstUse(false).build());
        backendErrorWithin(locks.tryAcquire("noschema"), false, CONNECT_BOUND,
                "postgresql failed acquire of lock 'noschema'", "[42P01]", schema);
        backendErrorWithin(locks.acquire("noschema"), false, CONNECT_BOUND, "[42P01]");
    }

    // ------------------------------------------------------------------ identifiers written into SQL

    @Test
    void identifierInjectionIsRejectedForEveryNameWrittenIntoSql() {
        List<String> hostile = List.of("x\"; drop table reactive_locks; --", "a b", "1abc", "", "naïve", "a-b",
                "x".repeat(64), "public.reactive_locks", "\"quoted\"", "semi;colon", "nul\u0000");
        List<Function<String, PostgresLockOptions.Builder>> setters = List.of(
                v -> PostgresLockOptions.builder().schema(v), v -> PostgresLockOptions.builder().table(v),
                v -> PostgresLockOptions.builder().sequence(v), v -> PostgresLockOptions.builder().windowTable(v),
                v -> PostgresLockOptions.builder().taskTable(v), v -> PostgresLockOptions.builder().channel(v));
        List<String> arguments = List.of("schema", "table", "sequence", "windowTable", "taskTable", "channel");
        for (int i = 0; i < setters.size(); i++) {
            Function<String, PostgresLockOptions.Builder> setter = setters.get(i);
            for (String v : hostile) {
                rejectedAtCall(IllegalArgumentException.class, () -> setter.apply(v),
                        arguments.get(i) + " must be an SQL identifier matching [a-zA-Z_][a-zA-Z0-9_]{0,62}");
            }
            rejectedAtCall(NullPointerException.class, () -> setter.apply(null), arguments.get(i));
        }
        // the longest identifier and reserved words are fine (written double-quoted)
        assertThat(PostgresLockOptions.builder().table("x".repeat(63)).schema("select").build().table()).hasSize(63);
        // and the tables of the good backend are still there
        assertFree(good, "after-injection");
    }

    @Test
    void reservedWordsAndMixedCaseIdentifiersWork() {
        LockClient locks = lockClient(factory("app", PASSWORD, pg.host(), pg.port(), "locks"),
                PostgresLockOptions.builder().schema("Select_" + Clients.unique()).table("Table").sequence("order")
                        .windowTable("where").taskTable("from").channel("Notify").build());
        var lease = Clients.warm(locks).acquire("reserved").block(STEP);
        assertThat(lease).isNotNull();
        lease.release().block(STEP);
    }

    // ------------------------------------------------------------------ addresses

    @Test
    void closedPortIsATransientErrorWithinTheRequestTimeout() throws IOException {
        assertRefusedTransiently(lockClient(factory("app", PASSWORD, pg.host(), closedPort(), "locks"), pgOptions), OPTIONS,
                "postgresql failed acquire of lock 'refused'", "Connection refused");
    }

    @Test
    void blackholedServerIsATransientTimeoutAndLeavesNothingLocked() {
        try (FaultProxy proxy = FaultProxy.start(pg.host(), pg.port())) {
            LockClient locks = Clients.warm(lockClient(factory("app", PASSWORD, proxy.host(), proxy.port(), "locks"), pgOptions));
            assertBlackholeTimesOutAndLeavesNothingLocked(proxy, locks, OPTIONS, good, "postgresql");
        }
    }

    // ------------------------------------------------------------------ options

    @Test
    void outOfRangeBackendOptionsAreRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> PostgresLockOptions.builder().poolMaxSize(0),
                "poolMaxSize must be at least 1", "0");
        rejectedAtCall(IllegalArgumentException.class, () -> PostgresLockOptions.builder().connectTimeout(Duration.ZERO),
                "connectTimeout must be positive");
        rejectedAtCall(NullPointerException.class, () -> PostgresLockOptions.builder().connectTimeout(null), "connectTimeout");
        rejectedAtCall(IllegalArgumentException.class, () -> PostgresLockOptions.builder()
                .reconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)), "reconnectBackoff.max must be at least");
        rejectedAtCall(IllegalArgumentException.class, () -> PostgresLockOptions.builder()
                .healthCheck(Duration.ZERO, Duration.ofSeconds(1)), "healthCheck.interval must be positive");
        rejectedAtCall(IllegalArgumentException.class, () -> PostgresLockOptions.builder().table("same").windowTable("same").build(),
                "table and windowTable must differ");
        rejectedAtCall(IllegalArgumentException.class, () -> PostgresLockOptions.builder().taskTable("reactive_locks").build(),
                "taskTable must differ");
        rejectedAtCall(NullPointerException.class, () -> PostgresLockBackend.create(null), "factory");
        rejectedAtCall(NullPointerException.class, () -> PostgresLockBackend.create(
                factory("app", PASSWORD, pg.host(), pg.port(), "locks"), null), "options");
        rejectedAtCall(IllegalArgumentException.class, () -> goodBackend.purgeExpired(Duration.ofSeconds(-1)),
                "olderThan must not be negative");
    }

    // ------------------------------------------------------------------ window lock and task queue

    @Test
    void windowPeriodBelowOneMillisecondOrNullIsRejected() {
        WindowLock window = goodSession.windowLocks(LockOptions.defaults());
        for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1), Duration.ofNanos(999_999))) {
            rejectedAtCall(IllegalArgumentException.class, () -> window.tryClaim("job", bad), "period must be at least 1 ms");
        }
        rejectedAtCall(NullPointerException.class, () -> window.tryClaim("job", null), "period");
        rejectedAtCall(IllegalArgumentException.class, () -> window.tryClaim("", Duration.ofHours(1)), "name must not be empty");
    }

    @Test
    void taskQueueNegativeRetriesEmptyTaskIdOversizedPayloadOrKeyIsRejected() {
        PostgresTaskQueue queue = goodSession.taskQueue(OPTIONS);
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "t1", -1), "retries", "-1");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "", 3), "taskId must not be empty");
        rejectedAtCall(NullPointerException.class, () -> queue.register("q", null, 3), "taskId");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("", "t1", 3), "queue must not be empty");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "t1", 3, "x".repeat(TaskQueue.MAX_PAYLOAD_BYTES + 1)),
                "payload must be at most");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.tryCapture("q", 0), "limit must be at least 1", "0");
        String lone = "\uD800".repeat(341);
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register(lone, lone, 3), "together");
    }
}
