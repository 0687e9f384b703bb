package io.reactivelocks.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.ZooKeeperServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DemoTest {

    @Test
    void theFrozenInstancesLateWriteIsRejectedAndNoUpdateIsLost() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Demo.Summary s = Demo.run(new Demo.Config(Duration.ofSeconds(4), 4, 2, Duration.ofMillis(400),
                Duration.ofMillis(1200), true), new PrintStream(buf, true, StandardCharsets.UTF_8));
        String out = buf.toString(StandardCharsets.UTF_8);
        assertThat(s.acquisitions()).isGreaterThan(50);
        assertThat(s.handoffs()).isPositive();
        assertThat(s.staleWritesRejected()).as(out).isGreaterThanOrEqualTo(1);
        assertThat(s.staleWritesAccepted()).isZero();
        assertThat(s.lostUpdates()).as(out).isZero();
        assertThat(s.leasesLost()).as("the frozen instance lost its lease").isGreaterThanOrEqualTo(1);
        assertThat(out).contains("rejected as stale").contains("summary: acquisitions");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"redis", "postgresql", "zookeeper"})
    void onARealServerTheFrozenInstanceIsCutOffAndItsLateWriteRejected(String kind) throws Exception {
        ServerFixture server = switch (kind) {
            case "redis" -> RedisServer.start();
            case "postgresql" -> PostgresServer.start();
            default -> ZooKeeperServer.start();
        };
        try (server) {
            String backend = switch (kind) {
                case "redis" -> ((RedisServer) server).url();
                case "postgresql" -> ((PostgresServer) server).url();
                default -> kind + "://" + server.host() + ":" + server.port();
            };
            boolean session = kind.equals("zookeeper");
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            Demo.Summary s = Demo.run(new Demo.Config(Duration.ofSeconds(session ? 12 : 5), 4, 2, Duration.ofMillis(600),
                    Duration.ofMillis(1500), true, backend), new PrintStream(buf, true, StandardCharsets.UTF_8));
            String out = buf.toString(StandardCharsets.UTF_8);
            assertThat(s.acquisitions()).as(out).isGreaterThan(5);
            assertThat(s.staleWritesRejected()).as(out).isGreaterThanOrEqualTo(1);
            assertThat(s.staleWritesAccepted()).isZero();
            assertThat(s.lostUpdates()).as(out).isZero();
        }
    }

    @Test
    void aBadBackendUrlIsRejectedNamingTheArgument() {
        assertThatThrownBy(() -> Demo.run(new Demo.Config(Duration.ofSeconds(1), 2, 1, Duration.ofMillis(600),
                Duration.ofMillis(1500), false, "mysql://localhost:3306"), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--backend");
    }
}
