package io.reactivelocks.test.server;

import static io.reactivelocks.test.server.RawClients.TIMEOUT;
import static io.reactivelocks.test.server.RawClients.fourLetterWord;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

@org.junit.jupiter.api.parallel.Isolated("sets system properties that choose how servers start")
class ZooKeeperServerTest {

    private static final Duration SHORT = Duration.ofMillis(500);

    @Test
    void startPauseResumeKillRestartOnTheSamePort() throws Exception {
        try (ZooKeeperServer zk = ZooKeeperServer.builder().mode(FixtureMode.BINARY).start()) {
            assertThat(zk.origin()).isEqualTo(ServerOrigin.LOCAL_BINARY);
            assertThat(zk.connectString()).isEqualTo("127.0.0.1:" + zk.port());
            assertThat(fourLetterWord(zk.host(), zk.port(), "ruok", TIMEOUT)).isEqualTo("imok");
            assertThat(fourLetterWord(zk.host(), zk.port(), "srvr", TIMEOUT)).contains("Mode: standalone");
            assertThat(fourLetterWord(zk.host(), zk.port(), "conf", TIMEOUT)).contains("tickTime=500");
            int port = zk.port();
            long pid = zk.pid();

            zk.pause();
            assertThatThrownBy(() -> fourLetterWord(zk.host(), port, "srvr", SHORT))
                    .isInstanceOf(SocketTimeoutException.class);
            zk.resume();
            assertThat(fourLetterWord(zk.host(), port, "srvr", TIMEOUT)).contains("Mode: standalone");

            zk.kill();
            assertThatThrownBy(() -> fourLetterWord(zk.host(), port, "srvr", SHORT)).isInstanceOf(ConnectException.class);

            zk.restart();
            assertThat(zk.port()).isEqualTo(port);
            assertThat(zk.pid()).isNotEqualTo(pid);
            assertThat(fourLetterWord(zk.host(), port, "srvr", TIMEOUT)).contains("Mode: standalone");
        }
    }

    @Test
    void embeddedFallbackForcedBySystemProperty() throws Exception {
        String before = System.getProperty(FixtureMode.PROPERTY);
        System.setProperty(FixtureMode.PROPERTY, "embedded");
        try (ZooKeeperServer zk = ZooKeeperServer.start()) {
            assertThat(zk.origin()).isEqualTo(ServerOrigin.EMBEDDED);
            assertThat(zk.supportsFaults()).isFalse();
            assertThat(fourLetterWord(zk.host(), zk.port(), "ruok", TIMEOUT)).isEqualTo("imok");
            assertThat(fourLetterWord(zk.host(), zk.port(), "srvr", TIMEOUT)).contains("Mode: standalone");
            assertThatThrownBy(zk::pause).isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("child process").hasMessageContaining("apt-get install zookeeper");
            assertThatThrownBy(zk::pid).isInstanceOf(UnsupportedOperationException.class);

            int port = zk.port();
            zk.kill();
            assertThatThrownBy(() -> fourLetterWord(zk.host(), port, "srvr", SHORT)).isInstanceOf(ConnectException.class);
            zk.restart();
            assertThat(zk.port()).isEqualTo(port);
            assertThat(fourLetterWord(zk.host(), port, "srvr", TIMEOUT)).contains("Mode: standalone");

            // the same property forces the other kinds too, and they say what to install
            assertThatThrownBy(RedisServer::start).isInstanceOf(ServerUnavailableException.class)
                    .hasMessageContaining("apt-get install redis-server");
        } finally {
            if (before == null) {
                System.clearProperty(FixtureMode.PROPERTY);
            } else {
                System.setProperty(FixtureMode.PROPERTY, before);
            }
        }
    }
}
