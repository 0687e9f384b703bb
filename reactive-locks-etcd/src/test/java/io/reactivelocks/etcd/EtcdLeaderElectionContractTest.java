package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LeaderElectionContract;
import io.reactivelocks.test.LockBackendContract.TestClient;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link LeaderElectionContract} on a real etcd: candidates queue by create revision, each through
 * its own fault proxy so that a lost leadership is a real partition of its session.
 */
class EtcdLeaderElectionContractTest extends LeaderElectionContract {

    private static EtcdTestSupport etcd;

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @BeforeEach
    void closeProxiesOfThePreviousTest() {
        etcd.closeProxies();
    }

    @Override
    protected LockBackend newBackend() {
        return etcd.proxiedBackend();
    }

    @Override
    protected void cutRenewals(TestClient client) {
        etcd.partitionUntilSessionLost((EtcdLockBackend) client.faults().delegate());
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty());
    }
}
