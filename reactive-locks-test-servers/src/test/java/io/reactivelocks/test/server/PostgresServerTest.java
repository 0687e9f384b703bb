package io.reactivelocks.test.server;

import static io.reactivelocks.test.server.RawClients.TIMEOUT;
import static io.reactivelocks.test.server.RawClients.postgresSslRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.test.server.RawClients.PgSession;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PostgresServerTest {

    private static final Duration SHORT = Duration.ofMillis(500);

    @Test
    void startPauseResumeKillRestartOnTheSamePort() throws Exception {
        PostgresServer pg = PostgresServer.builder().mode(FixtureMode.BINARY).start();
        Path dir = ((ServerProcess) pg.server()).directory();
        try (pg) {
            assertThat(pg.origin()).isEqualTo(ServerOrigin.LOCAL_BINARY);
            assertThat(postgresSslRequest(pg.host(), pg.port(), TIMEOUT)).isIn('N', 'S');
            assertThat(pg.url()).isEqualTo("postgresql://test:test@127.0.0.1:" + pg.port() + "/test");
            assertThat(pg.r2dbcUrl()).isEqualTo("r2dbc:" + pg.url());
            assertThat(pg.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:" + pg.port() + "/test");
            assertThat(pg.socketDirectory()).isPresent();
            int port = pg.port();
            long pid = pg.pid();

            try (PgSession session = new PgSession(pg.host(), pg.port(), pg.username(), pg.database(), SHORT)) {
                assertThat(session.authCode).isZero(); // trust
                assertThat(session.query("SELECT current_database()")).containsExactly("test");
                assertThat(session.query("SELECT setting FROM pg_settings WHERE name = 'fsync'")).containsExactly("off");
                session.query("CREATE TABLE kept (v text)");
                session.query("INSERT INTO kept VALUES ('survives')");

                pg.pause();
                // the postmaster is stopped: a new connection gets no answer ...
                assertThatThrownBy(() -> postgresSslRequest(pg.host(), pg.port(), SHORT))
                        .isInstanceOf(SocketTimeoutException.class);
                // ... and so are the backends: an open session hangs too
                assertThatThrownBy(() -> session.query("SELECT 1")).isInstanceOf(SocketTimeoutException.class);
                pg.resume();
            }
            assertThat(postgresSslRequest(pg.host(), pg.port(), TIMEOUT)).isIn('N', 'S');

            pg.kill();
            assertThatThrownBy(() -> postgresSslRequest(pg.host(), port, SHORT)).isInstanceOf(ConnectException.class);

            pg.restart();
            assertThat(pg.port()).isEqualTo(port);
            assertThat(pg.pid()).isNotEqualTo(pid);
            assertThat(postgresSslRequest(pg.host(), port, TIMEOUT)).isIn('N', 'S');
            try (PgSession session = new PgSession(pg.host(), port, pg.username(), pg.database(), TIMEOUT)) {
                assertThat(session.query("SELECT v FROM kept")).containsExactly("survives");
            }
        }
        assertThat(dir).doesNotExist();
    }

    @Test
    void passwordAuthenticationAsksForScram() throws Exception {
        try (PostgresServer pg = PostgresServer.builder().mode(FixtureMode.BINARY)
                .username("app").password("pw").database("locks").passwordAuthentication(true).start()) {
            assertThat(pg.passwordAuthentication()).isTrue();
            assertThat(pg.url()).isEqualTo("postgresql://app:pw@127.0.0.1:" + pg.port() + "/locks");
            try (PgSession session = new PgSession(pg.host(), pg.port(), "app", "locks", TIMEOUT)) {
                assertThat(session.authCode).isEqualTo(10); // AuthenticationSASL
                assertThat(session.authPayload).contains("SCRAM-SHA-256");
            }
        }
    }
}
