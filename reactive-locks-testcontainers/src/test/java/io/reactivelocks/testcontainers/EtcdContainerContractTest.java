package io.reactivelocks.testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.reactivelocks.etcd.EtcdLockOptions;
import io.reactivelocks.etcd.EtcdLocks;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import io.reactivelocks.test.fault.FaultProxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The backend contract suite against etcd in a container started by {@link EtcdLockContainer}; each
 * backend reaches it through its own fault proxy, so renewals can be cut by a real partition.
 */
class EtcdContainerContractTest extends LockBackendContract {

    private static final String PREFIX = "rltc-" + UUID.randomUUID().toString().substring(0, 8);
    private static final EtcdLockOptions OPTIONS = EtcdLockOptions.builder().prefix(PREFIX)
            .sessionTtl(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(1)).build();
    private static final List<FaultProxy> PROXIES = new ArrayList<>();
    private static EtcdLockContainer etcd;

    @BeforeAll
    static void startContainer() {
        LocalImages.require();
        etcd = new EtcdLockContainer(LocalImages.ETCD);
        etcd.start();
    }

    @AfterAll
    static void stopContainer() {
        closeProxies();
        if (etcd != null) {
            etcd.stop();
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
        FaultProxy proxy = FaultProxy.start(etcd.getHost(), etcd.getMappedPort(EtcdLockContainer.CLIENT_PORT));
        synchronized (EtcdContainerContractTest.class) {
            PROXIES.add(proxy);
        }
        Client client = Client.builder().endpoints("http://" + proxy.host() + ":" + proxy.port())
                .connectTimeout(Duration.ofSeconds(2)).retryMaxAttempts(1).retryDelay(100).build();
        return new ProxiedBackend(EtcdLocks.backend(client, OPTIONS), proxy, client::close);
    }

    @Override
    protected void cutRenewals(TestClient client) {
        ((ProxiedBackend) client.faults().delegate()).partitionUntilSessionLost();
    }

    @Override
    protected void awaitParkedWaiter(TestClient waiter, String name, long grantCallsBefore) {
        // etcd queues natively: one attempt enqueues the waiter behind the holder (two keys under the
        // suite's prefix, the test's only lock), and only the predecessor's deletion wakes it
        await().atMost(STEP).until(() -> keys().size() >= 2);
        // a failed attempt (a connection lost under load) is asked again: one attempt more each
        assertThat(waiter.faults().grantCalls() - waiter.faults().failedGrants())
                .as("attempts of the queued waiter, less the failed ones").isEqualTo(grantCallsBefore + 1);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(keys()).as("keys left under %s", PREFIX).isEmpty());
    }

    private static List<String> keys() throws Exception {
        List<String> out = new ArrayList<>();
        etcd.etcdClient().getKVClient().get(ByteSequence.from(PREFIX + "/", StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).withKeysOnly(true).build())
                .get(10, TimeUnit.SECONDS).getKvs()
                .forEach(kv -> out.add(kv.getKey().toString(StandardCharsets.UTF_8)));
        return out;
    }
}
