package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockState;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.test.server.EtcdServer;
import io.reactivelocks.test.server.PostgresServer;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * Names that look dangerous but are valid input (any non-empty string of at most 1024 UTF-8
 * bytes): control characters and NUL, braces (Redis Cluster hash tags), slashes, dots and
 * {@code zookeeper} (ZooKeeper paths), {@code %} (the Redis key encoding's escape), glob
 * characters, SQL quotes, lone UTF-16 surrogates, unnormalized Unicode. On every backend each must
 * be locked, observed and released as itself, and no two of them may be the same lock.
 */
class AcceptedNamesTest {

    /** The accepted-but-odd names; every one must be a lock of its own. */
    static final List<String> ODD_NAMES = List.of(
            "ctl\u0000\u0001\t\n\r\u001b\u007f", "\u0000", "nul\u0000", "nul",
            "{braces}", "{", "}", "a{b}c", "{}",
            "/", "//", "a/b/c", "/leading", "trailing/",
            "%", "%41", "A", "100%", "%%", "%2F",
            ".", "..", "zookeeper", "/zookeeper", "_c_x-lock-", "n-",
            "*", "?", "[a-z]", "\\", "\\0",
            "'; drop table reactive_locks; --", "\"quoted\"", "$1",
            "\uD800", "\uDC00", "\uDC00\uD800", "\uFFFD",
            "\u00E9", "e\u0301",
            " ", "\u00A0", "\uD83D\uDD12",
            "\u20AC".repeat(341) + "x");

    private static final Clients CLIENTS = new Clients();
    private static final Map<String, LockClient[]> BACKENDS = new LinkedHashMap<>();
    /**
     * These tests are about names on good servers, not about time: a request may take its time on a
     * loaded machine (one took over the bad-input tests' 1 s request timeout and failed the run).
     */
    private static final io.reactivelocks.LockOptions GOOD_SERVER =
            Clients.OPTIONS.mutate().requestTimeout(java.time.Duration.ofSeconds(5)).build();
    private static final List<AutoCloseable> SERVERS = new ArrayList<>();

    @BeforeAll
    static void startServers() {
        RedisServer redis = started(RedisServer.start());
        String keyPrefix = "badinput:" + Clients.unique() + ":";
        BACKENDS.put("redis", new LockClient[] {
                CLIENTS.redis(redis.url(), keyPrefix, GOOD_SERVER), CLIENTS.redis(redis.url(), keyPrefix, GOOD_SERVER)});

        PostgresServer pg = started(PostgresServer.start());
        PostgresLockOptions pgOptions = PostgresLockOptions.builder().schema("badinput_" + Clients.unique()).build();
        BACKENDS.put("postgresql", new LockClient[] {
                CLIENTS.postgres(Clients.pgFactory(pg.host(), pg.port(), pg.username(), pg.password(), pg.database()), pgOptions, GOOD_SERVER),
                CLIENTS.postgres(Clients.pgFactory(pg.host(), pg.port(), pg.username(), pg.password(), pg.database()), pgOptions, GOOD_SERVER)});

        EtcdServer etcd = started(EtcdServer.start());
        EtcdLockOptions etcdOptions = EtcdLockOptions.builder().prefix("badinput-" + Clients.unique()).build();
        BACKENDS.put("etcd", new LockClient[] {
                CLIENTS.etcd(Clients.etcdDriver(etcd.url()), etcdOptions, GOOD_SERVER),
                CLIENTS.etcd(Clients.etcdDriver(etcd.url()), etcdOptions, GOOD_SERVER)});

        ZooKeeperServer zk = started(ZooKeeperServer.start());
        ZooKeeperLockOptions zkOptions = ZooKeeperLockOptions.builder().root("/badinput-" + Clients.unique()).build();
        BACKENDS.put("zookeeper", new LockClient[] {
                CLIENTS.zookeeper(Clients.curator(zk.connectString()), zkOptions, GOOD_SERVER),
                CLIENTS.zookeeper(Clients.curator(zk.connectString()), zkOptions, GOOD_SERVER)});
    }

    @BeforeAll
    static void warmUp() {
        BACKENDS.values().forEach(pair -> {
            Clients.warm(pair[0]);
            Clients.warm(pair[1]);
        });
    }

    private static <T extends AutoCloseable> T started(T server) {
        SERVERS.add(server);
        return server;
    }

    @AfterAll
    static void stopServers() throws Exception {
        CLIENTS.close();
        for (AutoCloseable s : SERVERS) {
            s.close();
        }
    }

    static Stream<Arguments> backends() {
        return Stream.of("redis", "postgresql", "etcd", "zookeeper").map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void oddNamesAreLockedObservedAndReleasedAsThemselves(String backend) {
        LockClient locks = BACKENDS.get(backend)[0];
        LockClient other = BACKENDS.get(backend)[1];
        for (String name : ODD_NAMES) {
            Lease lease = locks.acquire(name).block(STEP);
            assertThat(lease).isNotNull();
            assertThat(lease.name()).isEqualTo(name);
            StepVerifier.create(other.observe(name).next())
                    .assertNext(s -> {
                        assertThat(s).as("observed state of %s", printable(name)).isInstanceOf(LockState.Held.class);
                        assertThat(s.name()).isEqualTo(name);
                        assertThat(((LockState.Held) s).token()).isEqualTo(lease.token());
                        assertThat(((LockState.Held) s).owner()).isEqualTo(lease.owner());
                    })
                    .expectComplete().verify(STEP);
            StepVerifier.create(other.tryAcquire(name)).as("held " + printable(name)).expectComplete().verify(STEP);
            lease.release().block(STEP);
            StepVerifier.create(other.observe(name).next())
                    .assertNext(s -> assertThat(s).as("after release of %s", printable(name)).isInstanceOf(LockState.Free.class))
                    .expectComplete().verify(STEP);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("backends")
    void noTwoOddNamesAreTheSameLock(String backend) {
        LockClient locks = BACKENDS.get(backend)[0];
        LockClient other = BACKENDS.get(backend)[1];
        // hold every name at once: a collision would show up as a name found busy
        List<Lease> held = new ArrayList<>();
        try {
            for (String name : ODD_NAMES) {
                Lease lease = locks.tryAcquire(name).block(STEP);
                assertThat(lease).as("'%s' is busy although nobody holds it: it collides with another name",
                        printable(name)).isNotNull();
                assertThat(lease.name()).isEqualTo(name);
                held.add(lease);
            }
            for (Lease lease : held) {
                StepVerifier.create(other.tryAcquire(lease.name())).as("held " + printable(lease.name()))
                        .expectComplete().verify(STEP);
            }
        } finally {
            Flux.fromIterable(held).concatMap(Lease::release).blockLast(STEP);
        }
    }

    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.chars().limit(40).forEach(c -> b.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", c) : String.valueOf((char) c)));
        return s.length() > 40 ? b + "...(" + s.length() + " chars)" : b.toString();
    }
}
