package io.reactivelocks.examples.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.test.server.EtcdServer;
import io.reactivelocks.test.server.MariaDbServer;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.test.server.ServerFixture;
import io.reactivelocks.test.server.ZooKeeperServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DemoTest {

    /**
     * Every run ends by itself: start-up (a warm-up lock per instance, at most 30 s), the duration,
     * then at most a wait timeout, a freeze and 5 s of grace, and closing (at most 10 s).
     */
    private static final Duration ENDS_WITHIN_AFTER_DURATION = Duration.ofSeconds(90);

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

    /**
     * The README's {@code ./demo.sh} with nothing but a duration: an embedded PostgreSQL from Maven
     * Central (run as {@code nobody} when the build runs as root), stopped and deleted at the end.
     */
    @Test
    void theDefaultRunIsOnAnEmbeddedPostgresThatIsGoneAfterwards() {
        Demo.Config config = Demo.parse("--duration=6s", "--workers=4", "--resources=2");
        assertThat(config.backend()).isEqualTo("embedded");
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        long started = System.nanoTime();
        Demo.Summary s = Demo.run(config, new PrintStream(buf, true, StandardCharsets.UTF_8));
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        String out = buf.toString(StandardCharsets.UTF_8);
        assertThat(out).contains("embedded PostgreSQL").contains("summary: acquisitions");
        assertThat(s.acquisitions()).as(out).isPositive();
        assertThat(s.staleWritesRejected()).as(out).isGreaterThanOrEqualTo(1);
        assertThat(s.staleWritesAccepted()).as(out).isZero();
        assertThat(s.lostUpdates()).as(out).isZero();
        assertThat(took).as(out).isLessThan(config.duration().plus(ENDS_WITHIN_AFTER_DURATION));
        assertThat(ProcessHandle.current().descendants()
                .filter(p -> p.info().command().orElse("").endsWith("/postgres")))
                .as("no embedded postgres left running").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"redis", "postgresql", "mariadb", "zookeeper", "etcd"})
    void onARealServerTheFrozenInstanceIsCutOffAndItsLateWriteRejected(String kind) throws Exception {
        ServerFixture server = switch (kind) {
            case "redis" -> RedisServer.start();
            case "postgresql" -> PostgresServer.start();
            case "mariadb" -> MariaDbServer.start();
            case "etcd" -> EtcdServer.start();
            default -> ZooKeeperServer.start();
        };
        try (server) {
            String backend = switch (kind) {
                case "redis" -> ((RedisServer) server).url();
                case "postgresql" -> ((PostgresServer) server).url();
                case "mariadb" -> {
                    MariaDbServer db = (MariaDbServer) server;
                    yield "mariadb://" + db.username() + ":" + db.password() + "@" + db.host() + ":" + db.port() + "/" + db.database();
                }
                default -> kind + "://" + server.host() + ":" + server.port();
            };
            // sessions (etcd, ZooKeeper) have a 2 s minimum lease, so the freeze is longer
            boolean session = kind.equals("zookeeper") || kind.equals("etcd");
            Duration duration = Duration.ofSeconds(session ? 12 : 5);
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            long started = System.nanoTime();
            Demo.Summary s = Demo.run(new Demo.Config(duration, 4, 2, Duration.ofMillis(600),
                    Duration.ofMillis(1500), true, backend), new PrintStream(buf, true, StandardCharsets.UTF_8));
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            String out = buf.toString(StandardCharsets.UTF_8);
            assertThat(s.acquisitions()).as(out).isGreaterThan(5);
            assertThat(s.staleWritesRejected()).as(out).isGreaterThanOrEqualTo(1);
            assertThat(s.staleWritesAccepted()).as(out).isZero();
            assertThat(s.lostUpdates()).as(out).isZero();
            assertThat(took).as(out).isLessThan(duration.plus(ENDS_WITHIN_AFTER_DURATION));
        }
    }

    @Test
    void aBadBackendUrlIsRejectedNamingTheArgument() {
        assertThatThrownBy(() -> Demo.run(new Demo.Config(Duration.ofSeconds(1), 2, 1, Duration.ofMillis(600),
                Duration.ofMillis(1500), false, "mysql://localhost:3306"), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--backend");
    }

    @Test
    void theCommandLineDefaultsToTheEmbeddedPostgresAndNamesBadArguments() {
        Demo.Config c = Demo.parse();
        assertThat(c.backend()).isEqualTo("embedded");
        assertThat(c.duration()).isEqualTo(Duration.ofSeconds(10));
        assertThat(Demo.parse("--backend=memory", "--duration=500ms").backend()).isEqualTo("memory");
        assertThatThrownBy(() -> Demo.parse("--speed=fast")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--speed=fast");
        assertThatThrownBy(() -> Demo.parse("--workers=many")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--workers=many");
    }
}
