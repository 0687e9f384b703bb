package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.lettuce.core.api.StatefulRedisConnection;
import io.r2dbc.spi.Connection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Each container through JUnit 5's {@code @Testcontainers}/{@code @Container}: its store client
 * works, and a lock client it hands out grants, fences and releases on the store.
 */
@Testcontainers
class LockContainersTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    static {
        LocalImages.require(); // before the extension starts the containers: fail saying what to install
    }

    @Container
    static final RedisLockContainer REDIS = new RedisLockContainer(LocalImages.REDIS);
    @Container
    static final PostgresLockContainer POSTGRES = new PostgresLockContainer(LocalImages.POSTGRES);
    @Container
    static final MariaDbLockContainer MARIADB = new MariaDbLockContainer(LocalImages.MARIADB);
    @Container
    static final EtcdLockContainer ETCD = new EtcdLockContainer(LocalImages.ETCD);
    @Container
    static final ZooKeeperLockContainer ZOOKEEPER = new ZooKeeperLockContainer(LocalImages.ZOOKEEPER);

    @BeforeAll
    static void containersAreRunning() {
        assertThat(REDIS.isRunning() && POSTGRES.isRunning() && MARIADB.isRunning() && ETCD.isRunning() && ZOOKEEPER.isRunning()).isTrue();
    }

    /** Acquires twice in a row on {@code locks}: strictly increasing tokens, nothing held afterwards. */
    private static void grantsFencesAndReleases(LockClient locks) {
        String name = "tc-" + UUID.randomUUID();
        Lease first = locks.acquire(name).block(TIMEOUT);
        assertThat(first).isNotNull();
        assertThat(locks.tryAcquire(name).blockOptional(TIMEOUT)).as("second acquire while held").isEmpty();
        first.release().block(TIMEOUT);
        Lease second = locks.acquire(name).block(TIMEOUT);
        assertThat(second).isNotNull();
        assertThat(second.token()).as("fencing token of the next holder").isGreaterThan(first.token());
        second.release().block(TIMEOUT);
        assertThat(locks.tryAcquire(name).flatMap(l -> l.release().thenReturn(true)).blockOptional(TIMEOUT))
                .as("free after the release").contains(true);
    }

    @Test
    void redisHandsOutItsClientAndALockClient() {
        try (StatefulRedisConnection<String, String> c = REDIS.redisClient().connect()) {
            assertThat(c.sync().ping()).isEqualTo("PONG");
        }
        assertThat(REDIS.redisUri().getPort()).isEqualTo(REDIS.getMappedPort(RedisLockContainer.REDIS_PORT));
        grantsFencesAndReleases(REDIS.lockClient());
    }

    @Test
    void postgresHandsOutAConnectionFactoryAndALockClient() {
        Integer one = Mono.usingWhen(Mono.from(POSTGRES.connectionFactory().create()),
                (Connection c) -> Flux.from(c.createStatement("SELECT 1").execute())
                        .flatMap(r -> r.map((row, meta) -> row.get(0, Integer.class))).next(),
                Connection::close).block(TIMEOUT);
        assertThat(one).isEqualTo(1);
        grantsFencesAndReleases(POSTGRES.lockClient());
    }

    @Test
    void mariaDbHandsOutAConnectionFactoryAndALockClient() {
        String user = Mono.usingWhen(Mono.from(MARIADB.connectionFactory().create()),
                (Connection c) -> Flux.from(c.createStatement("SELECT CURRENT_USER()").execute())
                        .flatMap(r -> r.map((row, meta) -> row.get(0, String.class))).next(),
                Connection::close).block(TIMEOUT);
        assertThat(user).isEqualTo(MariaDbLockContainer.DEFAULT_NAME + "@%");
        assertThat(MARIADB.getR2dbcUrl()).isEqualTo("r2dbc:mariadb://test:test@" + MARIADB.getHost() + ":"
                + MARIADB.getMappedPort(MariaDbLockContainer.MARIADB_PORT) + "/test");
        grantsFencesAndReleases(MARIADB.lockClient());
    }

    @Test
    void etcdHandsOutItsClientAndALockClient() throws Exception {
        ByteSequence key = ByteSequence.from("tc-check", StandardCharsets.UTF_8);
        ETCD.etcdClient().getKVClient().put(key, ByteSequence.from("1", StandardCharsets.UTF_8)).get();
        assertThat(ETCD.etcdClient().getKVClient().get(key).get().getCount()).isEqualTo(1);
        grantsFencesAndReleases(ETCD.lockClient());
    }

    @Test
    void zooKeeperHandsOutAStartedCuratorAndALockClient() throws Exception {
        assertThat(ZOOKEEPER.curator().getState()).isEqualTo(CuratorFrameworkState.STARTED);
        assertThat(ZOOKEEPER.curator().checkExists().forPath("/")).isNotNull();
        grantsFencesAndReleases(ZOOKEEPER.lockClient());
    }

    @Test
    void anImageNotDeclaredCompatibleIsRejected() {
        assertThatThrownBy(() -> new RedisLockContainer("localhost/reactivelocks-redis:7"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("compatible");
        assertThatThrownBy(() -> new EtcdLockContainer(DockerImageName.parse("redis:7")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("compatible");
        assertThatThrownBy(() -> new MariaDbLockContainer("localhost/reactivelocks-mariadb:10.11"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("compatible");
        assertThatThrownBy(() -> new RedisLockContainer((String) null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("image");
    }

    @Test
    void aContainerNotStartedHandsOutNothing() {
        RedisLockContainer notStarted = new RedisLockContainer(LocalImages.REDIS);
        assertThatThrownBy(notStarted::lockClient).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not running");
        assertThatThrownBy(() -> new ZooKeeperLockContainer(LocalImages.ZOOKEEPER).withSessionTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
    }
}
