package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static io.reactivelocks.safety.badinput.BadInput.assertBlackholeTimesOutAndLeavesNothingLocked;
import static io.reactivelocks.safety.badinput.BadInput.assertRefusedTransiently;
import static io.reactivelocks.safety.badinput.BadInput.backendErrorWithin;
import static io.reactivelocks.safety.badinput.BadInput.closedPort;
import static io.reactivelocks.safety.badinput.BadInput.rejectedAtCall;
import static io.reactivelocks.safety.badinput.Clients.OPTIONS;
import static io.reactivelocks.safety.badinput.Clients.REQUEST_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.test.server.ZooKeeperServer;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bad ZooKeeper configurations and a bad ZooKeeper: the root path, ACLs and digest credentials,
 * connect strings, addresses, a closed Curator client, and option values. One server for the class.
 */
class ZooKeeperBadInputTest {

    private static ZooKeeperServer server;
    private static LockClient good;
    private static String root;

    private final Clients clients = new Clients();

    @BeforeAll
    static void startServer() {
        server = ZooKeeperServer.start();
        root = "/badinput-" + Clients.unique();
        good = Clients.warm(new Clients().zookeeper(Clients.curator(server.connectString()),
                ZooKeeperLockOptions.builder().root(root).build(), OPTIONS));
    }

    @AfterAll
    static void stopServer() {
        BadInput.close(good);
        server.close();
    }

    @AfterEach
    void closeClients() {
        clients.close();
    }

    private LockClient lockClient(String connectString, ZooKeeperLockOptions zkOptions) {
        return clients.zookeeper(Clients.curator(connectString), zkOptions, OPTIONS);
    }

    // ------------------------------------------------------------------ root path

    @Test
    void rootThatIsNotAPlainAbsolutePathIsRejected() {
        for (String bad : List.of("relative", "trailing/", "/trailing/", "/a/../b", "/a/./b", "/a//b", "/..", "/.",
                "/nul\u0000", "")) {
            rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().root(bad),
                    "root must be a valid ZooKeeper path");
        }
        for (String reserved : List.of("/", "/zookeeper", "/zookeeper/quota")) {
            rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().root(reserved),
                    "root must not be / or under /zookeeper", reserved);
        }
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLockOptions.builder().root(null), "root");
        // a deep root and odd (but valid) segment characters work
        LockClient deep = lockClient(server.connectString(),
                ZooKeeperLockOptions.builder().root(root + "/deep/er/{x}/%41/ünï").build());
        var lease = Clients.warm(deep).acquire("deep").block(STEP);
        assertThat(lease).isNotNull();
        lease.release().block(STEP);
    }

    // ------------------------------------------------------------------ ACLs and credentials

    @Test
    void emptyAclOrDigestUserWithColonIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().acl(List.of()), "acl must not be empty");
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLockOptions.builder().acl(null), "acl");
        rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().digestAcl("a:b", "pw"),
                "user must be non-empty and contain no ':'", "a:b");
        rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().digestAcl("", "pw"),
                "user must be non-empty");
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLockOptions.builder().digestAcl("app", null), "password");
    }

    @Test
    void wrongDigestCredentialsArePermanentErrors() {
        String protectedRoot = root + "-acl";
        ZooKeeperLockOptions acl = ZooKeeperLockOptions.builder().root(protectedRoot).digestAcl("app", "secret").build();
        // the rightful user creates the root and a lock node
        CuratorFramework owner = authorized("app:secret");
        LockClient rightful = Clients.warm(clients.zookeeper(owner, acl, OPTIONS));
        var lease = rightful.acquire("guarded").block(STEP);
        // someone with the wrong password may not create nodes under it
        LockClient intruder = clients.zookeeper(authorized("app:wrong"), acl, OPTIONS);
        backendErrorWithin(intruder.tryAcquire("guarded-2"), false, REQUEST_TIMEOUT,
                "zookeeper failed acquire of lock 'guarded-2'", "NoAuth");
        backendErrorWithin(intruder.acquire("guarded-2"), false, REQUEST_TIMEOUT, "NoAuth");
        lease.release().block(STEP);
    }

    private static CuratorFramework authorized(String credentials) {
        return CuratorFrameworkFactory.builder().connectString(server.connectString())
                .sessionTimeoutMs(10_000).connectionTimeoutMs(2_000)
                .retryPolicy(new ExponentialBackoffRetry(50, 2))
                .authorization("digest", credentials.getBytes(StandardCharsets.UTF_8))
                .build();
    }

    // ------------------------------------------------------------------ connect strings and addresses

    @Test
    void malformedConnectStringIsRejectedWhenTheLockClientIsCreated() {
        // Curator's builder refuses an empty one itself
        rejectedAtCall(IllegalArgumentException.class, () -> Clients.curator(""), "connectionString cannot be null or empty");
        // Curator accepts these, and every request then failed with a bare, "transient" SystemError
        for (String bad : List.of("   ", "localhost:notaport", "localhost:99999", "localhost:-1", ":2181",
                "localhost:2181/chroot/", "localhost:2181/a/../b")) {
            CuratorFramework curator = Clients.curator(bad);
            clients.afterwards(curator::close);
            rejectedAtCall(IllegalArgumentException.class,
                    () -> clients.track(ZooKeeperLocks.connect(curator, ZooKeeperLockOptions.builder().root(root).build())),
                    "client connect string must be host:port", "was '" + bad + "'");
        }
        // several servers (and a trailing comma, which ZooKeeper ignores) are fine
        CuratorFramework several = Clients.curator(server.connectString() + "," + server.connectString() + ",");
        LockClient locks = Clients.warm(clients.zookeeper(several, ZooKeeperLockOptions.builder().root(root).build(), OPTIONS));
        var lease = locks.tryAcquire("several").block(STEP);
        assertThat(lease).isNotNull();
        lease.release().block(STEP);
    }

    @Test
    void chrootThatDoesNotExistIsAPermanentError() {
        // ZooKeeper does not create a chroot: every request under it fails with NoNode
        String chroot = "/badinput-missing-chroot-" + Clients.unique();
        LockClient locks = lockClient(server.connectString() + chroot, ZooKeeperLockOptions.builder().root(root).build());
        backendErrorWithin(locks.tryAcquire("chrooted"), false, REQUEST_TIMEOUT, "zookeeper failed acquire of lock 'chrooted'",
                "NoNode", root);
        backendErrorWithin(locks.acquire("chrooted"), false, REQUEST_TIMEOUT, "NoNode");
    }

    @Test
    void closedPortIsATransientErrorWithinTheRequestTimeout() throws IOException {
        assertRefusedTransiently(lockClient("127.0.0.1:" + closedPort(), ZooKeeperLockOptions.builder().root(root).build()),
                OPTIONS, "zookeeper", "lock 'refused'");
    }

    @Test
    void blackholedServerIsATransientTimeoutAndLeavesNothingLocked() {
        try (FaultProxy proxy = FaultProxy.start(server.host(), server.port())) {
            LockClient locks = Clients.warm(lockClient(proxy.host() + ":" + proxy.port(),
                    ZooKeeperLockOptions.builder().root(root).build()));
            assertBlackholeTimesOutAndLeavesNothingLocked(proxy, locks, OPTIONS, good, "zookeeper");
        }
    }

    @Test
    void closedCuratorClientIsRejectedWhenTheLockClientIsCreated() {
        CuratorFramework curator = Clients.curator(server.connectString());
        curator.start();
        curator.close();
        rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLocks.connect(curator), "client must not be closed");
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLocks.connect(null), "client");
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLocks.connect(curator, null), "zkOptions");
    }

    // ------------------------------------------------------------------ options

    @Test
    void nonPositiveIntervalsAreRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().confirmationInterval(Duration.ZERO),
                "confirmationInterval must be positive");
        rejectedAtCall(IllegalArgumentException.class, () -> ZooKeeperLockOptions.builder().requestTimeout(Duration.ofSeconds(-1)),
                "requestTimeout must be positive");
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLockOptions.builder().requestTimeout(null), "requestTimeout");
        rejectedAtCall(NullPointerException.class, () -> ZooKeeperLockOptions.builder().scheduler(null), "scheduler");
    }
}
