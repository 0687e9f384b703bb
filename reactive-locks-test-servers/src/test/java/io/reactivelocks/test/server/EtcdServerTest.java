package io.reactivelocks.test.server;

import static io.reactivelocks.test.server.RawClients.TIMEOUT;
import static io.reactivelocks.test.server.RawClients.http;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class EtcdServerTest {

    private static final Duration SHORT = Duration.ofMillis(500);

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void startPauseResumeKillRestartOnTheSamePort() throws Exception {
        try (EtcdServer etcd = EtcdServer.builder().mode(FixtureMode.BINARY).start()) {
            assertThat(etcd.origin()).isEqualTo(ServerOrigin.LOCAL_BINARY);
            assertThat(etcd.url()).isEqualTo("http://127.0.0.1:" + etcd.port());
            assertThat(http(etcd.host(), etcd.port(), "GET", "/health", null, TIMEOUT)).contains("200 OK").contains("true");
            assertThat(http(etcd.host(), etcd.port(), "POST", "/v3/kv/put",
                    "{\"key\":\"" + b64("k") + "\",\"value\":\"" + b64("kept") + "\"}", TIMEOUT)).contains("200 OK");
            int port = etcd.port();
            long pid = etcd.pid();

            etcd.pause();
            assertThatThrownBy(() -> http(etcd.host(), port, "GET", "/health", null, SHORT))
                    .isInstanceOf(SocketTimeoutException.class);
            etcd.resume();
            assertThat(http(etcd.host(), port, "GET", "/health", null, TIMEOUT)).contains("true");

            etcd.kill();
            assertThatThrownBy(() -> http(etcd.host(), port, "GET", "/health", null, SHORT))
                    .isInstanceOf(ConnectException.class);

            etcd.restart();
            assertThat(etcd.port()).isEqualTo(port);
            assertThat(etcd.pid()).isNotEqualTo(pid);
            assertThat(http(etcd.host(), port, "GET", "/health", null, TIMEOUT)).contains("true");
            assertThat(http(etcd.host(), port, "POST", "/v3/kv/range", "{\"key\":\"" + b64("k") + "\"}", TIMEOUT))
                    .contains(b64("kept"));
        }
    }
}
