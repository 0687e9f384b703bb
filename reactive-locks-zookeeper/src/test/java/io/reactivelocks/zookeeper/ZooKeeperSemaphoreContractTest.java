package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.CountingSemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import io.reactivelocks.test.fault.FaultProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The semaphore contract against a real ZooKeeper (a permit lives as long as the session: the
 * suite's lease time is the 2 s session timeout), plus the ZooKeeper specifics: ephemeral
 * sequential nodes, the czxid as token.
 */
class ZooKeeperSemaphoreContractTest extends SemaphoreContract {

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
    protected SemaphoreStore newStore() {
        return new ZooKeeperSemaphoreStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION),
                true, zk.root + "-semaphore", zk.options().acl());
    }

    private FaultProxy holderProxy;

    /** The crashing holder talks through a proxy, so that its session can be cut off for real. */
    @Override
    protected SemaphoreStore holderStore() {
        holderProxy = FaultProxy.start(zk.server.host(), zk.server.port());
        return new ZooKeeperSemaphoreStore(ZooKeeperTestSupport.curator(holderProxy.host() + ":" + holderProxy.port(),
                ZooKeeperTestSupport.SESSION), true, zk.root + "-semaphore", zk.options().acl());
    }

    /** A partition: the server expires the holder's session (and its ephemeral nodes) after the session timeout. */
    @Override
    protected void crash(SemaphoreStore store) {
        holderProxy.blackhole();
    }

    @AfterEach
    void closeHolderProxy() {
        if (holderProxy != null) {
            holderProxy.close();
            holderProxy = null;
        }
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(ZooKeeperTestSupport.SESSION).build();
    }

    @Test
    void eachPermitIsAnEphemeralSequentialNodeAndTheTokenItsCzxid() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION);
        Semaphore s = ZooKeeperLocks.semaphore(c, zk.options(), options());
        try {
            String name = name("nodes");
            List<Lease> both = s.acquire(name, 3, 2, options()).block(STEP);
            String parent = new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()).path(name);
            List<String> children = c.getChildren().forPath(parent); // test thread: blocking is fine here
            assertThat(children).hasSize(2);
            for (String child : children) {
                Stat stat = c.checkExists().forPath(parent + "/" + child);
                assertThat(stat.getEphemeralOwner()).as("ephemeral").isEqualTo(c.getZookeeperClient().getZooKeeper().getSessionId());
                assertThat(both).extracting(Lease::token).contains(stat.getCzxid());
            }
            assertThat(CreateMode.EPHEMERAL_SEQUENTIAL.isSequential()).isTrue();
            both.forEach(l -> l.release().block(STEP));
            assertThat(c.getChildren().forPath(parent)).isEmpty();
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    /**
     * No herd: a chain of 8 waiters on one permit (each releases as soon as it is granted) changes
     * the children only to grant and release — about 2 changes per handoff — where waiters that
     * create and delete an asking node on each busy attempt wake each other into many more. The
     * parent's {@code cversion} counts the changes (each one is a watch trigger for every waiter).
     */
    @Test
    void waitersDoNotChangeTheChildrenWhileTheyWait() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION);
        CountingSemaphoreStore store = new CountingSemaphoreStore(
                new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()));
        Semaphore s = Semaphore.create(store, options());
        int waiters = 8;
        try {
            String name = name("herd");
            String parent = new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()).path(name);
            Lease holder = s.acquire(name, 1).block(STEP);
            int start = c.checkExists().forPath(parent).getCversion(); // test thread: blocking is fine here
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(s.acquire(name, 1).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet()))
                        .subscribe());
            }
            settled(store, waiters);
            int before = c.checkExists().forPath(parent).getCversion();
            assertThat(granted.get()).as("granted while the holder holds").isZero();
            assertThat(before - start).as("children changes while %d waiters wait", waiters).isZero();
            int attemptsBefore = store.attempts();
            holder.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            int changes = c.checkExists().forPath(parent).getCversion() - before;
            int attempts = store.attempts() - attemptsBefore;
            subs.forEach(Disposable::dispose);
            System.out.printf("zookeeper semaphore, %d waiters: %d children changes, %d grant attempts for %d handoffs%n",
                    waiters, changes, attempts, waiters);
            // per handoff: the release and the next holder's node, and the next holder's attempt;
            // spare: one change and two attempts per handoff (a woken waiter may find the permit taken)
            assertThat(changes).as("children changes for %d handoffs", waiters).isLessThanOrEqualTo(3 * waiters + 1);
            assertThat(attempts).as("grant attempts for %d handoffs", waiters).isLessThanOrEqualTo(3 * waiters);
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    /**
     * Every waiter has asked and the change stream is live (and woke them to ask again, which shows as
     * at least one attempt more); nothing in flight.
     */
    private static void settled(CountingSemaphoreStore store, int waiters) {
        await("the waiters go quiet (they do not while each busy attempt wakes the others)").atMost(Duration.ofSeconds(20))
                .until(() -> store.subscribed() >= 1 && store.attempts() >= 2 + waiters
                && store.inFlight() == 0);
    }
}
