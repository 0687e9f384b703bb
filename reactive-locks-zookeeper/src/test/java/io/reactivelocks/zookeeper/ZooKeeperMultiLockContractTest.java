package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.MultiLockContract;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The multi-lock contract against a real ZooKeeper; the lease time is the session timeout (the
 * TTL of every ZooKeeper lease), and after each test no znode is left under the root.
 */
class ZooKeeperMultiLockContractTest extends MultiLockContract {

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

    @Override
    protected LockBackend newBackend() {
        return zk.backend();
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(ZooKeeperTestSupport.SESSION).build();
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("znodes left under %s", zk.root).isEmpty());
    }
}
