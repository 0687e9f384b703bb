package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static io.reactivelocks.safety.badinput.BadInput.errorsWithin;
import static io.reactivelocks.safety.badinput.Clients.OPTIONS;
import static io.reactivelocks.safety.badinput.Clients.REQUEST_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisURI;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.r2dbc.postgresql.PostgresLockOptions;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The "server" answers, but with garbage: an HTTP error page, or random bytes. Every backend must
 * report a typed {@link LockBackendException} within the request timeout (never hang, never
 * succeed, never an untyped driver exception), end a bounded wait with it, and close cleanly.
 * Where the driver recognises the garbage as such (a protocol or decoder error), the error is
 * permanent, so that even an acquire without a wait timeout ends; where the driver just waits for
 * more bytes (gRPC, ZooKeeper, PostgreSQL reading an "HTTP" frame length), it is the request
 * timeout — transient, as a silent server is.
 */
class GarbageServerTest {

    /** Bytes no store protocol starts with: not RESP, not a PostgreSQL message, not HTTP/2, not a jute length. */
    private static final byte[] RANDOM_JUNK = "\u00ff\u00fe\u0000\u0007junk\u00ff\r\n\u0000\u0000\u0000".getBytes(StandardCharsets.ISO_8859_1);

    private static GarbageServer httpError;
    private static GarbageServer junk;

    private final Clients clients = new Clients();

    @BeforeAll
    static void startGarbageServers() {
        httpError = GarbageServer.start();
        junk = GarbageServer.start(RANDOM_JUNK);
        // load and initialise each driver once (Netty, Lettuce, r2dbc, gRPC, ZooKeeper: seconds in a cold
        // JVM on a busy machine), so that the timed assertions below time the library, not class loading
        GarbageServerTest warmUp = new GarbageServerTest();
        try {
            for (String backend : new String[] {"redis", "postgresql", "etcd", "zookeeper"}) {
                warmUp.client(backend, junk).tryAcquire("warm-up", OPTIONS.mutate().requestTimeout(Duration.ofSeconds(3)).build())
                        .onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(STEP);
            }
        } finally {
            warmUp.clients.close();
        }
    }

    @AfterAll
    static void stopGarbageServers() {
        httpError.close();
        junk.close();
    }

    @AfterEach
    void closeClients() {
        // closing a client whose store talks garbage must not hang either
        long t0 = System.nanoTime();
        clients.close();
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(took).as("close of clients of a garbage server").isLessThan(STEP);
    }

    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> b = Stream.builder();
        for (String kind : new String[] {"http-error", "random-junk"}) {
            b.add(Arguments.of(kind, "redis"));
            b.add(Arguments.of(kind, "postgresql"));
            b.add(Arguments.of(kind, "etcd"));
            b.add(Arguments.of(kind, "zookeeper"));
        }
        return b.build();
    }

    private LockClient client(String backend, GarbageServer server) {
        String host = server.host();
        int port = server.port();
        switch (backend) {
            case "redis":
                return clients.redis(RedisURI.builder().withHost(host).withPort(port).withTimeout(Duration.ofSeconds(2)).build(),
                        RedisLockOptions.builder().keyPrefix("badinput:").build(), OPTIONS);
            case "postgresql":
                return clients.postgres(Clients.pgFactory(host, port, "app", "pw", "locks"),
                        PostgresLockOptions.defaults(), OPTIONS);
            case "etcd":
                return clients.etcd(Clients.etcdDriver("http://" + host + ":" + port),
                        EtcdLockOptions.builder().prefix("badinput").requestTimeout(REQUEST_TIMEOUT).build(), OPTIONS);
            case "zookeeper":
                return clients.zookeeper(Clients.curator(host + ":" + port),
                        ZooKeeperLockOptions.builder().root("/badinput").requestTimeout(REQUEST_TIMEOUT).build(), OPTIONS);
            default:
                throw new IllegalArgumentException(backend);
        }
    }

    @ParameterizedTest(name = "{1} answered with {0}")
    @MethodSource("cases")
    void aServerAnsweringGarbageIsATypedErrorWithinTheRequestTimeout(String kind, String backend) {
        GarbageServer server = kind.equals("http-error") ? httpError : junk;
        LockClient locks = client(backend, server);
        LockBackendException e = errorsWithin(locks.tryAcquire("garbage"), LockBackendException.class, REQUEST_TIMEOUT,
                backend, "lock 'garbage'");
        assertThat(e.lockName()).isEqualTo("garbage");
        // a bounded wait ends with the store's error (transient or not), not a hang
        Duration wait = Duration.ofMillis(1500);
        errorsWithin(locks.acquire("garbage", OPTIONS.mutate().waitTimeout(wait).build()), LockBackendException.class, wait,
                backend);
        errorsWithin(locks.observe("garbage"), LockBackendException.class, REQUEST_TIMEOUT, backend);
        assertThat(server.connectionsAccepted()).as("the client did reach the garbage server").isPositive();
    }

    static Stream<Arguments> recognisedGarbage() {
        return Stream.of(Arguments.of("random-junk", "redis", "ArrayIndexOutOfBoundsException"),
                Arguments.of("http-error", "redis", "RedisProtocolException"),
                Arguments.of("random-junk", "postgresql", "TooLongFrameException"));
    }

    @ParameterizedTest(name = "{1} answered with {0}")
    @MethodSource("recognisedGarbage")
    void garbageTheDriverRecognisesIsPermanentAndEndsEvenAnUnboundedWait(String kind, String backend, String cause) {
        GarbageServer server = kind.equals("http-error") ? httpError : junk;
        LockClient locks = client(backend, server);
        // a generous request timeout: the driver's own verdict must arrive first, whatever the machine's load
        Duration patient = Duration.ofSeconds(5);
        LockBackendException e = errorsWithin(locks.tryAcquire("garbage", OPTIONS.mutate().requestTimeout(patient).build()),
                LockBackendException.class, patient, backend, "lock 'garbage'", cause);
        assertThat(e.isTransient()).as("a peer that does not speak the protocol: %s", e).isFalse();
        // no wait timeout: a permanent error ends the wait instead of being retried forever
        errorsWithin(locks.acquire("garbage", OPTIONS.mutate().requestTimeout(patient).build()), LockBackendException.class,
                patient, cause);
    }
}
