package io.reactivelocks.r2dbc.postgresql;

import io.r2dbc.spi.ConnectionFactory;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.UnconfirmedReleaseContract;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The unconfirmed-release contract against a real PostgreSQL of its own, frozen with SIGSTOP (the
 * postmaster and every backend process). Any row of the name counts as left, expired or not.
 */
class PostgresUnconfirmedReleaseContractTest extends UnconfirmedReleaseContract {

    private static final String SCHEMA = "unconfirmed";
    private static PostgresServer pg;
    private static ConnectionFactory factory;
    private static PostgresLockOptions options;

    @BeforeAll
    static void startOwnServer() {
        pg = PostgresServer.start(); // its own: this class pauses it
        factory = PostgresTestSupport.factory(pg);
        options = PostgresLockOptions.builder().schema(SCHEMA).channel("unconfirmed_locks")
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).connectTimeout(Duration.ofSeconds(2))
                .poolMaxSize(2).build();
        PostgresLockBackend b = PostgresLockBackend.create(factory, options);
        b.migrate().block(PostgresTestSupport.TIMEOUT);
        b.close().block(PostgresTestSupport.TIMEOUT);
    }

    @AfterAll
    static void stopServer() {
        if (pg != null) {
            pg.close();
        }
    }

    @Override
    protected LockBackend newBackend() {
        return PostgresLockBackend.create(factory, options);
    }

    @Override
    protected void pauseServer() {
        pg.pause();
    }

    @Override
    protected void resumeServer() {
        pg.resume();
    }

    /** The name's row while an owner has it (a release frees the row and leaves it for the name's next grant). */
    @Override
    protected List<String> storedFor(String name) {
        return PostgresTestSupport.sql(factory, "SELECT name, owner, token, expires_at FROM "
                        + SqlIdentifiers.qualified(SCHEMA, options.table()) + " WHERE name = $1 AND owner <> ''", TextEscapes.encode(name))
                .stream().map(String::valueOf).toList();
    }
}
