package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.listen.StandardListenerManager;
import org.apache.curator.framework.listen.UnaryListenerManager;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * Faults of the real server and of the network, with real time: the server frozen (SIGSTOP)
 * beyond the session timeout, killed and restarted, and one client partitioned by its fault
 * proxy. In each, the holder's hold stream must complete before any other client is granted,
 * the next grant must carry a larger token, and nothing may be left behind.
 */
class ZooKeeperFaultTest {

    private static final Duration STEP = Duration.ofSeconds(15);
    private static final Duration SESSION = ZooKeeperTestSupport.SESSION;

    private static ZooKeeperTestSupport zk;
    private final List<LockClient> clients = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.startOwn();
    }

    @AfterAll
    static void stopServer() {
        if (zk != null) {
            zk.close();
        }
    }

    @AfterEach
    void closeClientsAndCheckNothingLeft() {
        for (LockClient c : clients) {
            c.close().block(STEP);
        }
        clients.clear();
        zk.closeProxies();
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).as("znodes left").isEmpty());
    }

    private static LockOptions options() {
        return LockOptions.builder().leaseTime(SESSION).requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20)).build();
    }

    private LockClient client(ZooKeeperLockBackend backend) {
        LockClient c = LockClient.create(backend, options());
        clients.add(c);
        return c;
    }

    /** A hold stream under observation: its first lease and when it ended. */
    private static final class Holding {
        final AtomicReference<Lease> first = new AtomicReference<>();
        final AtomicLong endedAt = new AtomicLong();
        final Disposable subscription;

        Holding(LockClient locks, String name) {
            subscription = locks.hold(name)
                    .doOnNext(l -> first.compareAndSet(null, l))
                    .subscribe(null, e -> endedAt.set(-1), () -> endedAt.set(System.nanoTime()));
            await().atMost(STEP).until(() -> first.get() != null);
        }
    }

    /** A waiting acquire: its lease and when it was granted. */
    private static final class Waiting {
        final AtomicReference<Lease> lease = new AtomicReference<>();
        final AtomicLong grantedAt = new AtomicLong();
        final Disposable subscription;

        Waiting(LockClient locks, String name) {
            subscription = locks.acquire(name).subscribe(l -> {
                grantedAt.set(System.nanoTime());
                lease.set(l);
            });
        }
    }

    @Test
    void freezingTheServerBeyondTheSessionTimeoutEndsTheHoldBeforeAnotherClientIsGranted() {
        String name = "sigstop-" + UUID.randomUUID();
        LockClient a = client(zk.expiringBackend());
        LockClient b = client(zk.expiringBackend());
        Holding hold = new Holding(a, name);
        Waiting waiter = new Waiting(b, name);
        await().atMost(STEP).until(() -> zk.children(name).size() == 2);

        long pausedAt = System.nanoTime();
        zk.server.pause();
        try {
            await().atMost(SESSION.plusSeconds(3)).until(() -> hold.endedAt.get() != 0);
            assertThat(hold.endedAt.get()).as("hold stream completed, not errored").isPositive();
            assertThat(Duration.ofNanos(hold.endedAt.get() - pausedAt)).as("hold ended within a session timeout of the freeze")
                    .isLessThan(SESSION.plusSeconds(1));
            assertThat(hold.first.get().isValid()).isFalse();
            // stay frozen until both sessions are past their timeout
            await().pollDelay(SESSION.multipliedBy(2)).atMost(SESSION.multipliedBy(3)).until(() -> true);
            assertThat(waiter.lease.get()).as("nobody is granted while the server is frozen").isNull();
        } finally {
            zk.server.resume();
        }
        await().atMost(STEP).until(() -> waiter.lease.get() != null);
        assertThat(waiter.grantedAt.get()).isGreaterThan(hold.endedAt.get());
        assertThat(waiter.lease.get().token()).isGreaterThan(hold.first.get().token());
        hold.subscription.dispose();
        waiter.lease.get().release().block(STEP);
    }

    @Test
    void killingTheServerEndsTheHoldAndTokensKeepGrowingAfterTheRestart() {
        String name = "restart-" + UUID.randomUUID();
        LockClient a = client(zk.expiringBackend());
        LockClient b = client(zk.expiringBackend());
        Holding hold = new Holding(a, name);
        Waiting waiter = new Waiting(b, name);
        await().atMost(STEP).until(() -> zk.children(name).size() == 2);

        long killedAt = System.nanoTime();
        zk.server.kill();
        await().atMost(SESSION.plusSeconds(3)).until(() -> hold.endedAt.get() != 0);
        assertThat(hold.endedAt.get()).as("hold stream completed, not errored").isPositive();
        assertThat(Duration.ofNanos(hold.endedAt.get() - killedAt)).isLessThan(SESSION.plusSeconds(1));
        assertThat(waiter.lease.get()).isNull();

        zk.server.restart();
        await().atMost(STEP.multipliedBy(2)).until(() -> waiter.lease.get() != null);
        assertThat(waiter.grantedAt.get()).isGreaterThan(hold.endedAt.get());
        assertThat(waiter.lease.get().token()).as("czxid after a restart (new epoch)").isGreaterThan(hold.first.get().token());
        hold.subscription.dispose();
        waiter.lease.get().release().block(STEP);

        // and the restarted server serves new holders
        Lease again = a.acquire(name).block(STEP);
        assertThat(again.token()).isGreaterThan(waiter.lease.get().token());
        again.release().block(STEP);
    }

    @Test
    void lostEndsEveryHoldStreamOfTheClientAtOnce() {
        // a 20 s session: only the LOST signal, not the local deadline, can end these holds quickly
        // the client's connection-state listeners, so that the test can tell them what Curator tells them on expiry
        UnaryListenerManager<ConnectionStateListener> listeners = StandardListenerManager.standard();
        CuratorFramework curator = ZooKeeperTestSupport.curator(CuratorFrameworkFactory.builder()
                .connectString(zk.server.connectString())
                .connectionStateListenerManagerFactory(c -> listeners), Duration.ofSeconds(20));
        ZooKeeperLockBackend backend = ZooKeeperLockBackend.owning(curator, zk.options());
        LockClient a = client(backend);
        Holding one = new Holding(a, "lost-one-" + UUID.randomUUID());
        Holding two = new Holding(a, "lost-two-" + UUID.randomUUID());
        assertThat(one.first.get().remaining()).isGreaterThan(Duration.ofSeconds(10));

        long lostAt = System.nanoTime();
        listeners.forEach(l -> l.stateChanged(curator, ConnectionState.LOST)); // what Curator reports on expiry
        await().atMost(Duration.ofSeconds(5)).until(() -> one.endedAt.get() != 0 && two.endedAt.get() != 0);
        assertThat(one.endedAt.get()).isPositive();
        assertThat(two.endedAt.get()).isPositive();
        assertThat(Duration.ofNanos(Math.max(one.endedAt.get(), two.endedAt.get()) - lostAt)).isLessThan(Duration.ofSeconds(2));
        assertThat(one.first.get().isValid()).isFalse();
    }

    @Test
    void aPartitionedClientIsSuspendedThenLosesItsSessionAndItsHoldEndsBeforeAnotherIsGranted() {
        String name = "partition-" + UUID.randomUUID();
        ZooKeeperLockBackend partitioned = zk.proxiedBackend();
        CuratorCalls calls = ZooKeeperTestSupport.callsOf(partitioned);
        LockClient a = client(partitioned);
        LockClient b = client(zk.expiringBackend());
        Holding hold = new Holding(a, name);
        Waiting waiter = new Waiting(b, name);
        await().atMost(STEP).until(() -> zk.children(name).size() == 2);

        long cutAt = System.nanoTime();
        zk.proxyOf(partitioned).blackhole();
        await().atMost(STEP).until(() -> waiter.lease.get() != null);
        assertThat(hold.endedAt.get()).as("hold completed before the other client's grant")
                .isPositive().isLessThan(waiter.grantedAt.get());
        assertThat(Duration.ofNanos(hold.endedAt.get() - cutAt)).isLessThan(SESSION.plusSeconds(1));
        assertThat(waiter.lease.get().token()).isGreaterThan(hold.first.get().token());

        // Curator: SUSPENDED first, LOST once a whole session timeout passed without the server
        await().atMost(STEP).until(() -> calls.states().contains(ConnectionState.LOST));
        assertThat(calls.states()).containsSubsequence(ConnectionState.SUSPENDED, ConnectionState.LOST);

        zk.proxyOf(partitioned).cutConnections();
        zk.proxyOf(partitioned).heal();
        await().atMost(STEP).until(() -> {
            List<ConnectionState> states = calls.states();
            return states.subList(states.indexOf(ConnectionState.LOST), states.size()).contains(ConnectionState.RECONNECTED);
        });
        hold.subscription.dispose();
        waiter.lease.get().release().block(STEP);
        // on its new session the partitioned client takes the lock again
        Lease again = a.acquire(name).block(STEP);
        assertThat(again.token()).isGreaterThan(waiter.lease.get().token());
        again.release().block(STEP);
    }
}
