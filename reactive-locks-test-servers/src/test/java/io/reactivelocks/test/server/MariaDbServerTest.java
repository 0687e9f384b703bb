package io.reactivelocks.test.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MariaDbServerTest {

    private static final Duration SHORT = Duration.ofMillis(500);

    @Test
    void startPauseResumeKillRestartOnTheSamePortKeepingCommittedData() throws Exception {
        MariaDbServer db = MariaDbServer.builder().mode(FixtureMode.BINARY).start();
        Path dir = ((ServerProcess) db.server()).directory();
        try (db) {
            assertThat(db.origin()).isEqualTo(ServerOrigin.LOCAL_BINARY);
            assertThat(db.r2dbcUrl()).isEqualTo("r2dbc:mariadb://test:test@127.0.0.1:" + db.port() + "/test");
            assertThat(db.jdbcUrl()).isEqualTo("jdbc:mariadb://127.0.0.1:" + db.port() + "/test");
            assertThat(db.socket()).hasValueSatisfying(s -> assertThat(s).startsWith(dir));
            assertThat(handshakeVersion(db, RawClients.TIMEOUT)).isEqualTo(10);
            int port = db.port();
            long pid = db.pid();

            // the test user logs in over TCP with its password and may create what it likes
            assertThat(sql(db, "SELECT CONCAT(DATABASE(), ' ', CURRENT_USER())")).containsExactly("test test@%");
            // its own temp dir: a MariaDB server starting deletes the "#sql*" files of its tmpdir, which with a
            // shared /tmp were another instance's bootstrap tables
            assertThat(sql(db, "SELECT @@tmpdir")).containsExactly(dir.resolve("tmp").toString());
            sql(db, "CREATE TABLE kept (v VARCHAR(20)) ENGINE=InnoDB; INSERT INTO kept VALUES ('survives')");
            sql(db, "CREATE DATABASE other_schema");

            db.pause();
            assertThatThrownBy(() -> handshakeVersion(db, SHORT)).isInstanceOf(SocketTimeoutException.class);
            db.resume();
            assertThat(handshakeVersion(db, RawClients.TIMEOUT)).isEqualTo(10);

            db.kill();
            assertThatThrownBy(() -> handshakeVersion(db, SHORT)).isInstanceOf(ConnectException.class);

            db.restart();
            assertThat(db.port()).isEqualTo(port);
            assertThat(db.pid()).isNotEqualTo(pid);
            assertThat(sql(db, "SELECT v FROM kept")).containsExactly("survives");
        }
        assertThat(dir).doesNotExist();
    }

    @Test
    void aMissingServerIsNamedWithWhatToInstall() {
        assertThat(MariaDbServer.INSTALL_HINT).contains("apt-get install mariadb-server").contains(MariaDbServer.URL_VARIABLE);
        assertThatThrownBy(() -> MariaDbServer.builder().mode(FixtureMode.CONTAINER).start())
                .isInstanceOf(ServerUnavailableException.class)
                .hasMessageContaining("apt-get install mariadb-server");
    }

    /** @return the protocol version of the server's first packet (10 for a handshake) */
    private static int handshakeVersion(MariaDbServer db, Duration timeout) throws IOException {
        try (Socket s = RawClients.connect(db.host(), db.port(), timeout)) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            in.readNBytes(4);
            return in.read();
        }
    }

    /** Runs statements through the mariadb client over TCP as the test user; returns the output lines. */
    private static List<String> sql(MariaDbServer db, String statements) {
        Commands.Result r = Commands.run(List.of(MariaDbServer.Builder.clientBinary().orElseThrow().toString(), "--no-defaults",
                "--protocol=TCP", "-h", db.host(), "-P", Integer.toString(db.port()), "-u", db.username(),
                "-p" + db.password(), "-N", "-B", db.database(), "-e", statements), null, null, Duration.ofSeconds(20));
        assertThat(r.ok()).as("mariadb client: %s", r.output()).isTrue();
        return r.output().lines().filter(l -> !l.isBlank()).toList();
    }
}
