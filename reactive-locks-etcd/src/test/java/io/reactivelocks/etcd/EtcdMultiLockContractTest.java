package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.MultiLockContract;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The multi-lock contract against a real etcd; after each test no key is left under the prefix. */
class EtcdMultiLockContractTest extends MultiLockContract {

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

    @Override
    protected LockBackend newBackend() {
        return etcd.backend();
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(STEP).untilAsserted(() -> assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty());
    }
}
