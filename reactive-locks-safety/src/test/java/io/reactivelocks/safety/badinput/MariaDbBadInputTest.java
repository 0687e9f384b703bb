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

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockStore;
import io.reactivelocks.r2dbc.SchemaMode;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockBackend;
import io.reactivelocks.r2dbc.mariadb.MariaDbLockOptions;
import io.reactivelocks.r2dbc.mariadb.MariaDbLocks;
import io.reactivelocks.r2dbc.mariadb.MariaDbSchemaException;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.MariaDbServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;

/**
 * Bad MariaDB configurations and a bad MariaDB: credentials, database, a missing schema in
 * {@code VALIDATE} mode, identifiers written into SQL, addresses, and the argument checks of the
 * backend options. One server for the class.
 */
class MariaDbBadInputTest {

    private static final String PASSWORD = "pw_" + Clients.unique().replace('-', '_');

    /**
     * How long the errors a new connection meets (authentication, database) may take: each call opens
     * one, which can take more than the 1 s request timeout on a loaded machine.
     */
    private static final Duration CONNECT_BOUND = Duration.ofSeconds(5);

    private static MariaDbServer db;
    private static LockStore goodSession;
    private static LockClient good;
    private static MariaDbLockOptions dbOptions;

    private final Clients clients = new Clients();

    @BeforeAll
    static void startServer() {
        db = MariaDbServer.builder().username("app").password(PASSWORD).database("locks").start();
        dbOptions = MariaDbLockOptions.builder().table("badinput_" + Clients.unique().replace('-', '_')).build();
        goodSession = MariaDbLocks.connect(factory("app", PASSWORD, db.host(), db.port(), "locks"), dbOptions);
        good = Clients.warm(goodSession.locks(OPTIONS));
    }

    @AfterAll
    static void stopServer() {
        BadInput.close(good);
        if (goodSession != null) {
            goodSession.close().block(STEP);
        }
        db.close();
    }

    @AfterEach
    void closeClients() {
        clients.close();
    }

    private static ConnectionFactory factory(String user, String password, String host, int port, String database) {
        return MariadbConnectionFactory.from(MariadbConnectionConfiguration.builder()
                .host(host).port(port).username(user).password(password).database(database)
                .connectTimeout(Duration.ofSeconds(3)).build());
    }

    private LockClient lockClient(ConnectionFactory factory, MariaDbLockOptions options) {
        return clients.track(LockClient.create(MariaDbLockBackend.create(factory, options),
                OPTIONS.mutate().requestTimeout(CONNECT_BOUND).build()));
    }

    // ------------------------------------------------------------------ credentials, database, schema


    @Test
    void wrongPasswordIsAPermanentErrorThatEndsEvenAnUnboundedWait() {
        LockClient locks = lockClient(factory("app", "wrong", db.host(), db.port(), "locks"), dbOptions);
        backendErrorWithin(locks.tryAcquire("wrongpass"), false, CONNECT_BOUND,
                "mariadb failed acquire of lock 'wrongpass'", "Access denied for user 'app'");
        backendErrorWithin(locks.acquire("wrongpass"), false, CONNECT_BOUND, "Access denied for user 'app'");
        assertFree(good, "wrongpass");
    }

    @Test
    void unknownDatabaseIsAPermanentErrorThatEndsEvenAnUnboundedWait() {
        LockClient locks = lockClient(factory("app", PASSWORD, db.host(), db.port(), "no_such_db"), dbOptions);
        backendErrorWithin(locks.tryAcquire("nodb"), false, CONNECT_BOUND, "mariadb failed acquire of lock 'nodb'",
                "Unknown database 'no_such_db'");
        backendErrorWithin(locks.acquire("nodb"), false, CONNECT_BOUND, "Unknown database 'no_such_db'");
    }

    @Test
    void missingTablesInValidateModeAreAPermanentErrorNamingEachOne() {
        String table = "unmade_" + Clients.unique().replace('-', '_');
        LockClient locks = lockClient(factory("app", PASSWORD, db.host(), db.port(), "locks"),
                MariaDbLockOptions.builder().table(table).schemaMode(SchemaMode.VALIDATE).build());
        MariaDbSchemaException missing = errorsWithin(locks.tryAcquire("unmade"), MariaDbSchemaException.class, CONNECT_BOUND,
                "are missing", table, "MariaDbLockBackend.migrate()");
        assertThat(missing.isTransient()).as("transient").isFalse();
        errorsWithin(locks.acquire("unmade"), MariaDbSchemaException.class, CONNECT_BOUND, table);
    }

    // ------------------------------------------------------------------ identifiers written into SQL

    @Test
    void identifierInjectionIsRejectedForEveryNameWrittenIntoSql() {
        List<String> hostile = List.of("x`; drop table reactive_locks; --", "a b", "1abc", "", "naïve", "a-b",
                "x".repeat(65), "locks.reactive_locks", "`quoted`", "semi;colon", "nul\u0000");
        List<Function<String, MariaDbLockOptions.Builder>> setters = List.of(
                v -> MariaDbLockOptions.builder().database(v), v -> MariaDbLockOptions.builder().table(v),
                v -> MariaDbLockOptions.builder().sequence(v));
        List<String> arguments = List.of("database", "table", "sequence");
        for (int i = 0; i < setters.size(); i++) {
            Function<String, MariaDbLockOptions.Builder> setter = setters.get(i);
            for (String v : hostile) {
                rejectedAtCall(IllegalArgumentException.class, () -> setter.apply(v),
                        arguments.get(i) + " must match [A-Za-z_][A-Za-z0-9_]{0,63}");
            }
        }
        rejectedAtCall(NullPointerException.class, () -> MariaDbLockOptions.builder().table(null), "table");
        rejectedAtCall(NullPointerException.class, () -> MariaDbLockOptions.builder().sequence(null), "sequence");
        // the longest identifier and reserved words are fine (written backquoted)
        assertThat(MariaDbLockOptions.builder().table("x".repeat(64)).sequence("select").build().table()).hasSize(64);
        assertFree(good, "after-injection");
    }

    // ------------------------------------------------------------------ addresses

    @Test
    void closedPortIsATransientErrorWithinTheRequestTimeout() throws IOException {
        LockClient locks = clients.track(LockClient.create(MariaDbLockBackend.create(
                factory("app", PASSWORD, db.host(), closedPort(), "locks"), dbOptions), OPTIONS));
        assertRefusedTransiently(locks, OPTIONS, "mariadb failed acquire of lock 'refused'");
    }

    @Test
    void blackholedServerIsATransientTimeoutAndLeavesNothingLocked() {
        try (FaultProxy proxy = FaultProxy.start(db.host(), db.port())) {
            LockClient locks = Clients.warm(clients.track(LockClient.create(MariaDbLockBackend.create(
                    factory("app", PASSWORD, proxy.host(), proxy.port(), "locks"), dbOptions), OPTIONS)));
            assertBlackholeTimesOutAndLeavesNothingLocked(proxy, locks, OPTIONS, good, "mariadb");
        }
    }

    // ------------------------------------------------------------------ options

    @Test
    void outOfRangeBackendOptionsAreRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> MariaDbLockOptions.builder().poolMaxSize(0),
                "poolMaxSize must be at least 1", "0");
        rejectedAtCall(IllegalArgumentException.class, () -> MariaDbLockOptions.builder().connectTimeout(Duration.ZERO),
                "connectTimeout must be positive");
        rejectedAtCall(NullPointerException.class, () -> MariaDbLockOptions.builder().connectTimeout(null), "connectTimeout");
        rejectedAtCall(IllegalArgumentException.class, () -> MariaDbLockOptions.builder().pollInterval(Duration.ofMillis(-1)),
                "pollInterval must be positive");
        rejectedAtCall(NullPointerException.class, () -> MariaDbLockOptions.builder().schemaMode(null), "schemaMode");
        rejectedAtCall(NullPointerException.class, () -> MariaDbLocks.connect((ConnectionFactory) null), "factory");
        rejectedAtCall(NullPointerException.class, () -> MariaDbLocks.connect(
                factory("app", PASSWORD, db.host(), db.port(), "locks"), null), "mariaDbOptions");
    }
}
