package io.reactivelocks.test.server;

import static io.reactivelocks.test.server.RawClients.TIMEOUT;
import static io.reactivelocks.test.server.RawClients.redis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.DockerClientFactory;

/**
 * The fixtures' container mode ({@link FixtureMode#CONTAINER}) for real, through Testcontainers on
 * the Docker API the build points it at (podman's service on the build machines), with the local
 * images that {@code .ci/build-images.sh} builds standing in for the official ones. Fails, never
 * skips, when no Docker API answers or the images are missing.
 */
@org.junit.jupiter.api.parallel.Isolated("sets system properties that choose how servers start")
class ContainerModeTest {

    private static final Duration SHORT = Duration.ofMillis(500);
    private static final Map<String, String> LOCAL_IMAGES = Map.of(
            "redis", "localhost/reactivelocks-redis:7",
            "postgres", "localhost/reactivelocks-postgres:15",
            "etcd", "localhost/reactivelocks-etcd:3.4",
            "zookeeper", "localhost/reactivelocks-zookeeper:3.8");

    @BeforeAll
    static void dockerApiAndLocalImages() {
        DockerContainer.unavailableReason().ifPresent(why -> fail(why
                + ". Install podman and runc and run .ci/install-servers.sh (starts podman's Docker-API service"
                + " and builds the local images)"));
        LOCAL_IMAGES.forEach((kind, image) -> {
            try {
                DockerClientFactory.lazyClient().inspectImageCmd(image).exec();
            } catch (RuntimeException e) {
                fail("image " + image + " is missing: run .ci/build-images.sh (" + e.getMessage() + ")");
            }
            System.setProperty(DockerContainer.IMAGE_PROPERTY_PREFIX + kind, image);
        });
    }

    @AfterAll
    static void officialImagesAgain() {
        LOCAL_IMAGES.keySet().forEach(kind -> System.clearProperty(DockerContainer.IMAGE_PROPERTY_PREFIX + kind));
    }

    @Test
    void redisContainerPausesResumesAndRestartsOnTheSamePort() throws Exception {
        try (RedisServer redis = RedisServer.builder().mode(FixtureMode.CONTAINER).start()) {
            assertThat(redis.origin()).isEqualTo(ServerOrigin.CONTAINER);
            assertThat(redis.host()).isEqualTo("127.0.0.1");
            assertThat(redis(redis.host(), redis.port(), TIMEOUT, "PING")).containsExactly("+PONG");
            assertThat(redis.pid()).isPositive();
            int port = redis.port();

            try (Socket open = RawClients.connect(redis.host(), redis.port(), SHORT)) {
                redis.pause();
                assertThatThrownBy(() -> RawClients.redis(open, "PING")).isInstanceOf(SocketTimeoutException.class);
                redis.resume();
            }
            assertThat(redis(redis.host(), port, TIMEOUT, "SET k v")).containsExactly("+OK");

            redis.kill();
            assertThatThrownBy(() -> redis(redis.host(), port, SHORT, "PING")).isInstanceOf(IOException.class);
            redis.restart();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis(redis.host(), port, TIMEOUT, "PING")).containsExactly("+PONG");
        }
    }

    @Test
    void postgresEtcdAndZooKeeperContainersServe() {
        try (PostgresServer pg = PostgresServer.builder().mode(FixtureMode.CONTAINER).start();
             EtcdServer etcd = EtcdServer.builder().mode(FixtureMode.CONTAINER).start();
             ZooKeeperServer zk = ZooKeeperServer.builder().mode(FixtureMode.CONTAINER).start()) {
            assertThat(pg.origin()).isEqualTo(ServerOrigin.CONTAINER);
            assertThat(Probes.postgresReady(pg.host(), pg.port(), pg.username(), pg.database())).isTrue();
            assertThat(etcd.origin()).isEqualTo(ServerOrigin.CONTAINER);
            assertThat(Probes.etcdHealthy(etcd.host(), etcd.port())).isTrue();
            assertThat(zk.origin()).isEqualTo(ServerOrigin.CONTAINER);
            assertThat(Probes.zooKeeperFourLetterWord(zk.host(), zk.port(), "ruok")).isEqualTo("imok");
        }
    }
}
