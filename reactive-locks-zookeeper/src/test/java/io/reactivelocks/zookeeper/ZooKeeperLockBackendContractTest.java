package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract;
import java.time.Duration;
import java.util.Set;
import reactor.core.scheduler.Scheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The backend contract suite against a real ZooKeeper (the Debian package's server as a child
 * JVM). Every client talks to ZooKeeper through its own fault proxy, so that
 * {@link #cutRenewals} can stop its session for real (a partition): failing the client-side
 * calls would not end ZooKeeper's server-side session. The lease time of the suite's options is
 * the session timeout (2 s), which is the TTL of every ZooKeeper lease. ZooKeeper queues waiters
 * natively, so {@link #awaitParkedWaiter} looks for the waiter's node and its predecessor watch
 * instead of a re-check.
 */
class ZooKeeperLockBackendContractTest extends LockBackendContract {

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
        zk.closeProxies(); // after the previous test's clients were closed (the suite's @AfterEach)
    }

    @Override
    protected LockBackend newBackend() {
        return zk.proxiedBackend();
    }

    @Override
    protected LockBackend newBackend(Scheduler timers) {
        return zk.proxiedBackend(zk.options().mutate().scheduler(timers).build());
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
    protected void awaitParkedWaiter(TestClient waiter, String name, long grantCallsBefore) {
        // one attempt enqueues the waiter behind the holder (two nodes), and it watches its
        // predecessor: only that node's deletion wakes it (the server holds the waiter's session's watch on it)
        ZooKeeperLockBackend backend = (ZooKeeperLockBackend) waiter.faults().delegate();
        CuratorCalls calls = ZooKeeperTestSupport.callsOf(backend);
        // the session is read at each look: a waiter's client may still be connecting when the wait starts (its id
        // is 0 until then — read once, a loaded machine made this wait for a watch of session 0)
        // the failure says what the store showed and how often the waiter tried
        await().atMost(STEP).untilAsserted(() -> {
            long session = calls.sessionId();
            assertThat(session != 0 && zk.children(name).size() >= 2
                            && zk.watchesOnQueueOf(name).values().stream().anyMatch(s -> s.contains(session)))
                    .as("two queue nodes and a watch of the waiter's session 0x%x; children %s, watches %s, waiter's attempts %d (before %d, failed %d)",
                            session, zk.children(name), zk.watchesOnQueueOf(name), waiter.faults().grantCalls(), grantCallsBefore,
                            waiter.faults().failedGrants())
                    .isTrue();
        });
        // a failed attempt (a connection lost under load) is asked again: one attempt more each
        assertThat(waiter.faults().grantCalls() - waiter.faults().failedGrants())
                .as("attempts of the queued waiter, less the failed ones").isEqualTo(grantCallsBefore + 1);
    }

    @Override
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        super.assertNothingLeft(backend, names);
        await().atMost(STEP).untilAsserted(() ->
                assertThat(zk.nodes()).as("znodes left under %s", zk.root).isEmpty());
    }
}
