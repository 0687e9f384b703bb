package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import io.reactivelocks.test.fault.FaultProxy;
import io.reactivelocks.zookeeper.ZooKeeperLockOptions;
import io.reactivelocks.zookeeper.ZooKeeperLocks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The backend contract suite against ZooKeeper in a container started by {@link ZooKeeperLockContainer}
 * (500 ms ticks, so short sessions are allowed); each backend has its own Curator client reaching the
 * server through its own fault proxy, so renewals can be cut by a real partition.
 */
class ZooKeeperContainerContractTest extends LockBackendContract {

    // 3 s, not the native suite's 2 s: every request crosses a fault proxy and the container's port forwarding, and a
    // loaded run lost a 2 s session (a hold ended in renewalKeepsALeaseAliveAcrossManyLeasePeriods)
    private static final Duration SESSION = Duration.ofSeconds(3);
    private static final String ROOT = "/rltc-" + UUID.randomUUID().toString().substring(0, 8);
    private static final ZooKeeperLockOptions OPTIONS = ZooKeeperLockOptions.builder().root(ROOT).build();
    private static final List<FaultProxy> PROXIES = new ArrayList<>();
    private static ZooKeeperLockContainer zk;

    @BeforeAll
    static void startContainer() {
        LocalImages.require();
        zk = new ZooKeeperLockContainer(LocalImages.ZOOKEEPER).withEnv("ZOO_TICK_TIME", "500");
        zk.start();
    }

    @AfterAll
    static void stopContainer() {
        closeProxies();
        if (zk != null) {
            zk.stop();
        }
    }

    @BeforeEach
    void closeProxiesOfThePreviousTest() {
        closeProxies(); // after the previous test's clients were closed (the suite's @AfterEach)
    }

    private static synchronized void closeProxies() {
        PROXIES.forEach(FaultProxy::close);
        PROXIES.clear();
    }

    @Override
    protected LockBackend newBackend() {
        FaultProxy proxy = FaultProxy.start(zk.getHost(), zk.getMappedPort(ZooKeeperLockContainer.CLIENT_PORT));
        synchronized (ZooKeeperContainerContractTest.class) {
            PROXIES.add(proxy);
        }
        CuratorFramework curator = CuratorFrameworkFactory.builder()
                .connectString(proxy.host() + ":" + proxy.port())
                .sessionTimeoutMs((int) SESSION.toMillis())
                .connectionTimeoutMs(5_000)
                .retryPolicy(new ExponentialBackoffRetry(50, 3))
                .build();
        curator.start();
        return new ProxiedBackend(ZooKeeperLocks.backend(curator, OPTIONS), proxy, curator::close);
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(SESSION).build();
    }

    @Override
    protected void cutRenewals(TestClient client) {
        ((ProxiedBackend) client.faults().delegate()).partitionUntilSessionLost();
    }

    @Override
    protected void awaitParkedWaiter(TestClient waiter, String name, long grantCallsBefore) {
        // one attempt enqueues the waiter behind the holder (two sequential nodes, the suite's only
        // ones at that moment), and it watches its predecessor: only that node's deletion wakes it
        await().atMost(STEP).until(() -> leaves().size() >= 2);
        // a failed attempt (a connection lost under load) is asked again: one attempt more each
        assertThat(waiter.faults().grantCalls() - waiter.faults().failedGrants())
                .as("attempts of the queued waiter, less the failed ones").isEqualTo(grantCallsBefore + 1);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(STEP).untilAsserted(() -> assertThat(leaves()).as("znodes left under %s", ROOT).isEmpty());
    }

    /** @return the nodes under the root that have no children (the queue entries) */
    private static List<String> leaves() throws Exception {
        List<String> out = new ArrayList<>();
        collect(ROOT, out);
        return out;
    }

    private static void collect(String path, List<String> out) throws Exception {
        List<String> children;
        try {
            children = zk.curator().getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        if (children.isEmpty() && !path.equals(ROOT)) {
            out.add(path);
        }
        for (String c : children) {
            collect(path + "/" + c, out);
        }
    }
}
