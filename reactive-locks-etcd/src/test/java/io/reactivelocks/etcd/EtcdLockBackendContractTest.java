package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import reactor.core.scheduler.Scheduler;

/**
 * The backend contract suite against a real etcd. Every client talks to etcd through its own
 * fault proxy, so that {@link #cutRenewals} can stop its session keep-alives for real (a
 * partition): failing the client-side calls would not stop etcd's server-side lease.
 * etcd queues waiters natively, so {@link #awaitParkedWaiter} looks for the waiter's key instead of a re-check.
 */
class EtcdLockBackendContractTest extends LockBackendContract {

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
        etcd.closeProxies(); // after the previous test's clients were closed (the suite's @AfterEach)
    }

    @Override
    protected LockBackend newBackend() {
        return etcd.proxiedBackend();
    }

    @Override
    protected LockBackend newBackend(Scheduler timers) {
        return etcd.proxiedBackend(etcd.options().mutate().scheduler(timers).build());
    }

    @Override
    protected void cutRenewals(TestClient client) {
        etcd.partitionUntilSessionLost((EtcdLockBackend) client.faults().delegate());
    }

    @Override
    protected void awaitParkedWaiter(TestClient waiter, String name, long grantCallsBefore) {
        // etcd queues natively: one attempt enqueues the waiter behind the holder (two keys), and
        // only the predecessor's deletion wakes it
        String under = etcd.prefix + "/" + EtcdKeys.encode(name) + "/";
        await().atMost(STEP).until(() -> etcd.keys(under).size() >= 2);
        // a failed attempt (a connection lost under load) is asked again: one attempt more each
        assertThat(waiter.faults().grantCalls() - waiter.faults().failedGrants())
                .as("attempts of the queued waiter, less the failed ones").isEqualTo(grantCallsBefore + 1);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(etcd.keys()).as("keys left under %s", etcd.prefix).isEmpty());
    }
}
