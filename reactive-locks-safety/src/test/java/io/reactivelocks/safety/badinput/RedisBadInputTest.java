package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static io.reactivelocks.safety.badinput.BadInput.assertBlackholeTimesOutAndLeavesNothingLocked;
import static io.reactivelocks.safety.badinput.BadInput.assertFree;
import static io.reactivelocks.safety.badinput.BadInput.assertRefusedTransiently;
import static io.reactivelocks.safety.badinput.BadInput.backendErrorWithin;
import static io.reactivelocks.safety.badinput.BadInput.closedPort;
import static io.reactivelocks.safety.badinput.BadInput.rejectedAtCall;
import static io.reactivelocks.safety.badinput.Clients.OPTIONS;
import static io.reactivelocks.safety.badinput.Clients.REQUEST_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.AclSetuserArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.protocol.CommandType;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockBackend;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.redis.RedisQuorumBackend;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.RedisServer;
import io.reactivelocks.window.WindowLock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Bad Redis configurations and a bad Redis: credentials, permissions, addresses, TLS, key prefix,
 * option values, and the argument checks of the window lock and task queue. One server for the
 * class, with a password for the default user and an ACL user {@code locker}.
 */
class RedisBadInputTest {

    private static final String DEFAULT_PASSWORD = "default-pw-" + Clients.unique();
    private static final String LOCKER_PASSWORD = "locker-pw-" + Clients.unique();
    private static final String NOEVAL_PASSWORD = "noeval-pw-" + Clients.unique();

    private static RedisServer server;
    private static RedisClient driver;
    private static RedisLockBackend goodBackend;
    private static LockStore goodSession;
    private static LockClient good;
    private static String prefix;

    private final Clients clients = new Clients();

    @BeforeAll
    static void startServer() {
        server = RedisServer.builder().password(DEFAULT_PASSWORD).user("locker", LOCKER_PASSWORD).start();
        driver = RedisClient.create();
        prefix = "badinput:" + Clients.unique() + ":";
        goodBackend = RedisLocks.backend(driver, RedisLockOptions.builder().keyPrefix(prefix).uri(RedisURI.create(server.url())).build());
        goodSession = RedisLocks.connect(goodBackend);
        good = Clients.warm(goodSession.locks(OPTIONS));
        // an ACL user that may do everything but run scripts
        RedisClient admin = RedisClient.create(RedisURI.create(server.url()));
        try (var c = admin.connect()) {
            c.sync().aclSetuser("noeval", AclSetuserArgs.Builder.on().addPassword(NOEVAL_PASSWORD)
                    .allKeys().allChannels().allCommands()
                    .removeCommand(CommandType.EVAL).removeCommand(CommandType.EVALSHA));
        } finally {
            admin.shutdown();
        }
    }

    @AfterAll
    static void stopServer() {
        BadInput.close(good);
        if (goodSession != null) {
            goodSession.close().block(STEP); // and the backend
        }
        driver.shutdown();
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.close();
    }

    private RedisURI.Builder uri(String host, int port) {
        return RedisURI.builder().withHost(host).withPort(port).withTimeout(Duration.ofSeconds(2));
    }

    private LockClient lockClient(RedisURI uri, LockOptions options) {
        return clients.redis(uri, RedisLockOptions.builder().keyPrefix(prefix).build(), options);
    }

    // ------------------------------------------------------------------ credentials

    @Test
    void wrongPasswordIsAPermanentErrorThatEndsEvenAnUnboundedWait() {
        LockClient locks = lockClient(uri(server.host(), server.port()).withPassword("wrong".toCharArray()).build(),
                OPTIONS);
        backendErrorWithin(locks.tryAcquire("wrongpass"), false, REQUEST_TIMEOUT, "redis failed acquire of lock 'wrongpass'",
                "WRONGPASS");
        // default options wait until cancelled: a permanent error must end the wait, not be retried
        backendErrorWithin(locks.acquire("wrongpass"), false, REQUEST_TIMEOUT, "WRONGPASS");
        assertFree(good, "wrongpass");
    }

    @Test
    void missingPasswordIsAPermanentError() {
        LockClient locks = lockClient(uri(server.host(), server.port()).build(), OPTIONS);
        backendErrorWithin(locks.tryAcquire("nopass"), false, REQUEST_TIMEOUT, "redis failed acquire of lock 'nopass'",
                "NOAUTH");
        backendErrorWithin(locks.acquire("nopass"), false, REQUEST_TIMEOUT, "NOAUTH");
    }

    @Test
    void unknownAclUserIsAPermanentError() {
        LockClient locks = lockClient(uri(server.host(), server.port())
                .withAuthentication("nobody", LOCKER_PASSWORD.toCharArray()).build(), OPTIONS);
        backendErrorWithin(locks.tryAcquire("nobody"), false, REQUEST_TIMEOUT, "redis failed acquire of lock 'nobody'",
                "WRONGPASS");
        backendErrorWithin(locks.acquire("nobody"), false, REQUEST_TIMEOUT, "WRONGPASS");
    }

    @Test
    void userWithoutScriptPermissionIsAPermanentError() {
        LockClient locks = lockClient(uri(server.host(), server.port())
                .withAuthentication("noeval", NOEVAL_PASSWORD.toCharArray()).build(), OPTIONS);
        backendErrorWithin(locks.tryAcquire("noeval"), false, REQUEST_TIMEOUT, "redis failed acquire of lock 'noeval'",
                "NOPERM");
        backendErrorWithin(locks.acquire("noeval"), false, REQUEST_TIMEOUT, "NOPERM");
        backendErrorWithin(locks.observe("noeval"), false, REQUEST_TIMEOUT, "redis failed inspect of lock 'noeval'", "NOPERM");
        assertFree(good, "noeval");
    }

    @Test
    void databaseIndexOutOfRangeIsAPermanentError() {
        LockClient locks = lockClient(RedisURI.create("redis://locker:" + LOCKER_PASSWORD + "@" + server.host() + ":"
                + server.port() + "/4711"), OPTIONS);
        backendErrorWithin(locks.tryAcquire("db"), false, REQUEST_TIMEOUT, "redis failed acquire of lock 'db'",
                "DB index is out of range");
    }

    // ------------------------------------------------------------------ addresses

    @Test
    void closedPortIsATransientErrorWithinTheRequestTimeout() throws IOException {
        int port = closedPort();
        assertRefusedTransiently(lockClient(uri(server.host(), port).build(), OPTIONS), OPTIONS,
                "redis failed acquire of lock 'refused'", "Connection refused");
    }

    @Test
    void blackholedServerIsATransientTimeoutAndLeavesNothingLocked() {
        try (FaultProxy proxy = FaultProxy.start(server.host(), server.port())) {
            LockClient locks = lockClient(uri(proxy.host(), proxy.port())
                    .withAuthentication("locker", LOCKER_PASSWORD.toCharArray()).build(), OPTIONS);
            Clients.warm(locks);
            assertBlackholeTimesOutAndLeavesNothingLocked(proxy, locks, OPTIONS, good, "redis");
            assertThat(locks.metrics().heldLeaseCount()).isZero();
        }
    }

    @Test
    void tlsToAPlainServerIsATransientTimeoutWithinTheRequestTimeout() {
        // a plain Redis reads the TLS ClientHello as the start of an inline command and waits for its
        // end: to the client that is a server that accepted TCP and never answered — a timeout
        LockClient locks = lockClient(uri(server.host(), server.port()).withSsl(true)
                .withAuthentication("locker", LOCKER_PASSWORD.toCharArray()).build(), OPTIONS);
        backendErrorWithin(locks.tryAcquire("tls"), true, REQUEST_TIMEOUT,
                "redis did not answer acquire of lock 'tls' within the request timeout");
        Duration wait = Duration.ofMillis(1500);
        // then the shared connect's own timeout ("Connection initialization timed out") may be the last error seen
        backendErrorWithin(locks.acquire("tls", OPTIONS.mutate().waitTimeout(wait).build()), true, wait,
                "lock 'tls'");
        assertFree(good, "tls");
    }

    @Test
    void releaseWithAnotherOwnersIdReleasesNothing() {
        var lease = good.acquire("owned").block(STEP);
        // the store's compare-and-delete: a forged, a foreign and an empty owner id delete nothing
        for (String forged : List.of("not-the-owner", io.reactivelocks.spi.GrantRequest.newOwner(), "", lease.owner() + " ")) {
            StepVerifier.create(goodBackend.release("owned", forged)).expectNext(false).expectComplete().verify(STEP);
        }
        StepVerifier.create(good.observe("owned").next())
                .assertNext(s -> assertThat(s.isHeld()).as("still held after foreign releases").isTrue())
                .expectComplete().verify(STEP);
        rejectedAtCall(NullPointerException.class, () -> goodBackend.release("owned", null), "owner");
        lease.release().block(STEP);
        assertFree(good, "owned");
    }

    // ------------------------------------------------------------------ options

    @Test
    void keyPrefixWithBracesOrNullIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> RedisLockOptions.builder().keyPrefix("app{1}:"),
                "keyPrefix must not contain '{' or '}'", "app{1}:");
        rejectedAtCall(IllegalArgumentException.class, () -> RedisLockOptions.builder().keyPrefix("}"), "keyPrefix");
        rejectedAtCall(NullPointerException.class, () -> RedisLockOptions.builder().keyPrefix(null), "keyPrefix");
    }

    @Test
    void emptyOrOddKeyPrefixIsAcceptedAndKeepsClientsApart() {
        // documented as accepted: an empty prefix, and one with glob or control characters
        for (String p : List.of("", "*?[x]\u0000:", "%")) {
            LockClient a = clients.redis(RedisURI.create(server.url()), RedisLockOptions.builder().keyPrefix(p).build(), OPTIONS);
            var lease = a.acquire("prefixed-" + Clients.unique()).block(STEP);
            assertThat(lease).isNotNull();
            var elsewhere = good.tryAcquire(lease.name()).block(STEP);
            assertThat(elsewhere).as("another prefix is another lock").isNotNull();
            elsewhere.release().block(STEP);
            lease.release().block(STEP);
        }
    }

    @Test
    void fenceTtlUnderOneSecondOrNullIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> RedisLockOptions.builder().fenceTtl(Duration.ofMillis(999)),
                "fenceTtl must be at least 1 s", "PT0.999S");
        rejectedAtCall(IllegalArgumentException.class, () -> RedisLockOptions.builder().fenceTtl(Duration.ofSeconds(-1)),
                "fenceTtl must be at least 1 s");
        rejectedAtCall(NullPointerException.class, () -> RedisLockOptions.builder().fenceTtl(null), "fenceTtl");
    }

    @Test
    void nullDriverOrOptionsAreRejectedByTheFactories() {
        rejectedAtCall(NullPointerException.class, () -> RedisLocks.connect((io.lettuce.core.RedisClient) null), "client");
        rejectedAtCall(NullPointerException.class, () -> RedisLocks.connect((io.lettuce.core.cluster.RedisClusterClient) null), "client");
        rejectedAtCall(NullPointerException.class, () -> goodSession.locks((LockOptions) null), "options");
        rejectedAtCall(NullPointerException.class, () -> RedisLocks.connect(driver, null), "options");
        rejectedAtCall(NullPointerException.class, () -> RedisLockBackend.create(null), "client");
        rejectedAtCall(NullPointerException.class, () -> RedisLocks.backend(driver, null), "options");
    }

    @Test
    void quorumOfNoInstancesOrANonPositiveInstanceTimeoutIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> RedisQuorumBackend.create(List.of()), "instances must not be empty");
        rejectedAtCall(NullPointerException.class, () -> RedisQuorumBackend.create(null), "instances");
        rejectedAtCall(NullPointerException.class, () -> RedisQuorumBackend.create(Collections.singletonList(null)), "instances");
        rejectedAtCall(IllegalArgumentException.class, () -> RedisQuorumBackend.create(List.of(goodBackend), Duration.ZERO),
                "instanceTimeout must be positive");
        rejectedAtCall(NullPointerException.class, () -> RedisQuorumBackend.create(List.of(goodBackend), null), "instanceTimeout");
    }

    // ------------------------------------------------------------------ window lock and task queue

    @Test
    void windowPeriodBelowOneMillisecondOrNullIsRejected() {
        WindowLock window = goodSession.windowLocks(LockOptions.defaults());
        for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1), Duration.ofNanos(999_999))) {
            rejectedAtCall(IllegalArgumentException.class, () -> window.tryClaim("job", bad), "period must be at least 1 ms");
        }
        rejectedAtCall(IllegalArgumentException.class, () -> window.tryClaim("job", Duration.ofNanos(1_000_001)),
                "period must be a whole number of milliseconds");
        rejectedAtCall(NullPointerException.class, () -> window.tryClaim("job", null), "period");
        rejectedAtCall(IllegalArgumentException.class, () -> window.tryClaim("", Duration.ofHours(1)), "name must not be empty");
        rejectedAtCall(NullPointerException.class, () -> RedisLocks.connect((RedisLockBackend) null), "backend");
        rejectedAtCall(NullPointerException.class, () -> goodSession.windowLocks(null), "options");
    }

    @Test
    void taskQueueNegativeRetriesEmptyTaskIdOrZeroLimitIsRejected() {
        TaskQueue queue = goodSession.taskQueue(OPTIONS);
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "t1", -1), "retries must be at least 0", "-1");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "", 3), "taskId must not be empty");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "t".repeat(1025), 3),
                "taskId must be at most 1024 UTF-8 bytes");
        rejectedAtCall(NullPointerException.class, () -> queue.register(null, "t1", 3), "queue");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("", "t1", 3), "queue must not be empty");
        List<String> ids = new ArrayList<>(List.of("ok", ""));
        rejectedAtCall(IllegalArgumentException.class, () -> queue.registerAll("q", ids, 3), "taskId must not be empty");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.tryCapture("q", 0), "limit must be at least 1", "0");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.status("q", ""), "taskId must not be empty");
        rejectedAtCall(IllegalArgumentException.class, () -> queue.register("q", "t1", 3, "x".repeat(TaskQueue.MAX_PAYLOAD_BYTES + 1)),
                "payload must be at most");
    }
}
