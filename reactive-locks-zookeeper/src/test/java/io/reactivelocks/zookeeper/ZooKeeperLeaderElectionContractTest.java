package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LeaderElectionContract;
import io.reactivelocks.test.LockBackendContract.TestClient;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link LeaderElectionContract} on a real ZooKeeper: candidates queue as ephemeral-sequential
 * nodes, each client through its own fault proxy so that a lost leadership is a real partition.
 */
class ZooKeeperLeaderElectionContractTest extends LeaderElectionContract {

    private static ZooKeeperTestSupport zk;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @BeforeEach
    void closeProxiesOfThePreviousTest() {
        zk.closeProxies();
    }

    @Override
    protected LockBackend newBackend() {
        return zk.proxiedBackend();
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(ZooKeeperTestSupport.SESSION).build();
    }

    @Override
    protected void cutRenewals(TestClient client) {
        zk.partitionUntilSessionLost((ZooKeeperLockBackend) client.faults().delegate());
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(STEP).untilAsserted(() ->
                assertThat(zk.nodes()).as("znodes left under %s", zk.root).isEmpty());
    }
}
