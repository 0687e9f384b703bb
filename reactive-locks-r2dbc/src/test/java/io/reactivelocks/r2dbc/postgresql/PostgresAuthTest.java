package io.reactivelocks.r2dbc.postgresql;

import static io.reactivelocks.r2dbc.postgresql.PostgresTestSupport.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.test.server.PostgresServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** A server that requires SCRAM-SHA-256 passwords: the right one works, a wrong one fails fast and for good. */
class PostgresAuthTest {

    private static PostgresServer pg;

    @BeforeAll
    static void startServerWithPasswords() {
        // no space in the password: r2dbc-postgresql's SCRAM client (com.ongres.scram, no SASLprep)
        // mangles spaces, so such passwords fail with the driver alone (as pgjdbc#1889 did)
        pg = PostgresServer.builder().username("app").password("s3cret'pw\"%$").database("locks")
                .passwordAuthentication(true).start();
    }

    @AfterAll
    static void stopServer() {
        pg.close();
    }

    @Test
    void theRightPasswordLocksAndListens() {
        PostgresLockBackend backend = PostgresLockBackend.create(PostgresTestSupport.factory(pg));
        LockClient locks = LockClient.create(backend, LockOptions.defaults());
        try {
            StepVerifier.create(locks.withLock("auth", lease -> locks.observe("auth").next()))
                    .assertNext(s -> assertThat(s.isHeld()).isTrue())
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(backend.events("auth").take(1)).expectNext(new LockEvent.Subscribed("auth"))
                    .expectComplete().verify(TIMEOUT);
        } finally {
            locks.close().block(TIMEOUT);
        }
    }

    @Test
    void aWrongPasswordIsANonTransientErrorThatEndsEvenAnUnboundedAcquire() {
        PostgresLockBackend backend = PostgresLockBackend.create(
                PostgresTestSupport.factory(pg, "app", "wrong", pg.host(), pg.port()));
        // waiting forever would be the bug: a permanent failure must end even an unbounded acquire
        LockClient locks = LockClient.create(backend, LockOptions.defaults());
        try {
            Duration quick = Duration.ofSeconds(10); // a bound, not a speed check: without the fix the acquire never ends
            StepVerifier.create(locks.tryAcquire("auth")).expectErrorSatisfies(PostgresAuthTest::authFailure).verify(quick);
            StepVerifier.create(locks.acquire("auth")).expectErrorSatisfies(PostgresAuthTest::authFailure).verify(quick);
            StepVerifier.create(locks.observe("auth")).expectErrorSatisfies(PostgresAuthTest::authFailure).verify(quick);
            StepVerifier.create(backend.events("auth")).expectErrorSatisfies(PostgresAuthTest::authFailure).verify(quick);
            StepVerifier.create(backend.migrate()).expectErrorSatisfies(PostgresAuthTest::authFailure).verify(quick);
        } finally {
            locks.close().block(TIMEOUT);
        }
    }

    private static void authFailure(Throwable e) {
        assertThat(e).isInstanceOf(LockBackendException.class).hasMessageContaining("28P01");
        assertThat(((LockBackendException) e).isTransient()).as("transient").isFalse();
    }
}
