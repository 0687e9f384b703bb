package io.reactivelocks.test.server;

import static io.reactivelocks.test.server.RawClients.TIMEOUT;
import static io.reactivelocks.test.server.RawClients.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisServerTest {

    private static final Duration SHORT = Duration.ofMillis(500);

    @Test
    void startPauseResumeKillRestartOnTheSamePort() throws Exception {
        RedisServer redis = RedisServer.builder().mode(FixtureMode.BINARY).start();
        Path dir = ((ServerProcess) redis.server()).directory();
        try (redis) {
            assertThat(redis.origin()).isEqualTo(ServerOrigin.LOCAL_BINARY);
            assertThat(redis.supportsFaults()).isTrue();
            assertThat(redis.host()).isEqualTo("127.0.0.1");
            assertThat(redis.url()).isEqualTo("redis://127.0.0.1:" + redis.port());
            assertThat(redis(redis.host(), redis.port(), TIMEOUT, "PING")).containsExactly("+PONG");
            int port = redis.port();
            long pid = redis.pid();
            assertThat(ProcessHandle.of(pid)).isPresent();

            try (Socket open = RawClients.connect(redis.host(), redis.port(), SHORT)) {
                redis.pause();
                assertThatThrownBy(() -> redis(open, "PING")).isInstanceOf(SocketTimeoutException.class);
                assertThatThrownBy(() -> redis(redis.host(), redis.port(), SHORT, "PING"))
                        .isInstanceOf(SocketTimeoutException.class);
                redis.resume();
            }
            assertThat(redis(redis.host(), redis.port(), TIMEOUT, "PING")).containsExactly("+PONG");

            redis.kill();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));
            assertThatThrownBy(() -> redis(redis.host(), port, SHORT, "PING")).isInstanceOf(ConnectException.class);

            redis.restart();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.pid()).isNotEqualTo(pid);
            assertThat(redis(redis.host(), port, TIMEOUT, "PING")).containsExactly("+PONG");
            assertThat(Files.readString(((ServerProcess) redis.server()).logFile())).contains("---- start #2");
        }
        assertThat(dir).doesNotExist();
        assertThatThrownBy(() -> redis(redis.host(), redis.port(), SHORT, "PING")).isInstanceOf(ConnectException.class);
    }

    @Test
    void restartWithoutPersistenceLosesDataWithAppendOnlyKeepsIt() throws Exception {
        try (RedisServer plain = RedisServer.builder().mode(FixtureMode.BINARY).start();
             RedisServer aof = RedisServer.builder().mode(FixtureMode.BINARY).appendOnly(true).start()) {
            for (RedisServer r : new RedisServer[] {plain, aof}) {
                assertThat(redis(r.host(), r.port(), TIMEOUT, "SET k v1")).containsExactly("+OK");
                r.kill();
                r.restart();
            }
            assertThat(redis(plain.host(), plain.port(), TIMEOUT, "GET k")).containsExactly("$-1");
            assertThat(redis(aof.host(), aof.port(), TIMEOUT, "GET k")).containsExactly("v1");
        }
    }

    @Test
    void passwordAndAclUser() throws Exception {
        try (RedisServer r = RedisServer.builder().mode(FixtureMode.BINARY).password("s3cret").user("app", "app pw").start()) {
            assertThat(r.username()).contains("app");
            assertThat(r.password()).contains("app pw");
            assertThat(r.url()).isEqualTo("redis://app:app%20pw@127.0.0.1:" + r.port());
            assertThat(redis(r.host(), r.port(), TIMEOUT, "PING").get(0)).startsWith("-NOAUTH");
            assertThat(redis(r.host(), r.port(), TIMEOUT, "AUTH s3cret", "PING")).containsExactly("+OK", "+PONG");
            assertThat(redis(r.host(), r.port(), TIMEOUT, "AUTH app wrong").get(0)).startsWith("-WRONGPASS");
            try (Socket s = RawClients.connect(r.host(), r.port(), TIMEOUT)) {
                // a password with a space cannot go through the space-separated helper: send AUTH as a RESP array by hand
                s.getOutputStream().write("*3\r\n$4\r\nAUTH\r\n$3\r\napp\r\n$6\r\napp pw\r\n".getBytes());
                assertThat(RawClients.readLine(s.getInputStream())).isEqualTo("+OK");
                assertThat(redis(s, "ACL WHOAMI")).isEqualTo("app");
            }
        }
    }

    @Test
    void defaultStartWalksTheChain() throws Exception {
        try (RedisServer r = RedisServer.start()) {
            assertThat(r.origin()).isIn((Object[]) ServerOrigin.values());
            assertThat(redis(r.host(), r.port(), TIMEOUT, "PING")).containsExactly("+PONG");
        }
    }
}
