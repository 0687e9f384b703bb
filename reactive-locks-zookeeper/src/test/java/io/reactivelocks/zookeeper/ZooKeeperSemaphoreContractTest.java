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
import reactor.util.retry.Retry;
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
     * No herd: a chain of 8 waiters on one permit (each releases as soon as it is granted). Each
     * waiter keeps its node in the queue and watches only its predecessor, so a handoff costs the
     * release's delete and the next waiter's listing — about 2 requests, counted by the server
     * ({@code mntr}'s {@code zk_packets_received}, which also counts the session's pings and the
     * holders' renewals: hence the spare) — and the children change only by the releases.
     */
    @Test
    void aHandoffWakesOnlyTheNextWaiter() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION);
        CountingSemaphoreStore store = new CountingSemaphoreStore(
                new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()));
        Semaphore s = Semaphore.create(store, options());
        int waiters = 8;
        try {
            String name = name("herd");
            String parent = new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()).path(name);
            Lease holder = s.acquire(name, 1).block(STEP);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(s.acquire(name, 1).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet()))
                        .subscribe());
            }
            await("every waiter queued and parked on its predecessor").atMost(Duration.ofSeconds(20))
                    .until(() -> store.waiting() == waiters && store.inFlight() == 0);
            assertThat(granted.get()).as("granted while the holder holds").isZero();
            int changesBefore = c.checkExists().forPath(parent).getCversion(); // test thread: blocking is fine here
            long requestsBefore = packetsReceived();
            int attemptsBefore = store.attempts();
            holder.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long requests = packetsReceived() - requestsBefore;
            int changes = c.checkExists().forPath(parent).getCversion() - changesBefore;
            int attempts = store.attempts() - attemptsBefore;
            subs.forEach(Disposable::dispose);
            System.out.printf("zookeeper semaphore, %d waiters: %d requests, %d children changes, %d grant attempts for %d handoffs%n",
                    waiters, requests, changes, attempts, waiters);
            // the releases only (the holder's and each grantee's): waiters neither create nor delete while they wait
            assertThat(changes).as("children changes for %d handoffs", waiters).isLessThanOrEqualTo(waiters + 1);
            // one attempt per handoff (the woken waiter's); spare: one more each (a safety-net timer)
            assertThat(attempts).as("grant attempts for %d handoffs", waiters).isLessThanOrEqualTo(2 * waiters);
            // 2 per handoff; spare: one per handoff for pings and renewals
            assertThat(requests).as("requests for %d handoffs", waiters).isLessThanOrEqualTo(3L * waiters + 2);
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    /**
     * No herd with N = 2: only the head of the line watches the children, the others the waiter
     * before them (told by a change of its node when it is let in). With a 10-minute backoff only
     * these watches can wake a waiter, so the chain ends only if none is missed; about 4 requests per
     * handoff (the release, the head's listing, its mark, the next head's listing).
     */
    @Test
    void withTwoPermitsTheHeadOfTheLineWatchesTheHoldersAndTheOthersTheirPredecessor() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION);
        CountingSemaphoreStore store = new CountingSemaphoreStore(
                new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()));
        Semaphore s = Semaphore.create(store, options().mutate()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0)).build());
        int waiters = 8;
        try {
            String name = name("herd2");
            Lease one = s.acquire(name, 2).block(STEP);
            Lease two = s.acquire(name, 2).block(STEP);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(s.acquire(name, 2).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet())).subscribe());
            }
            await("every waiter queued and parked").atMost(Duration.ofSeconds(20))
                    .until(() -> store.waiting() == waiters && store.inFlight() == 0);
            long before = packetsReceived();
            one.release().block(STEP);
            two.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long requests = packetsReceived() - before;
            subs.forEach(Disposable::dispose);
            System.out.printf("zookeeper semaphore N = 2, %d waiters: %d requests for %d handoffs%n", waiters, requests, waiters);
            assertThat(requests).as("requests for %d handoffs", waiters).isLessThanOrEqualTo(6L * waiters + 4);
        } finally {
            s.close().block(STEP);
            c.close();
        }
    }

    private static long packetsReceived() {
        for (String line : zk.fourLetterWord("mntr").split("\n")) {
            String[] kv = line.split("\t");
            if (kv.length == 2 && kv[0].trim().equals("zk_packets_received")) {
                return Long.parseLong(kv[1].trim());
            }
        }
        throw new IllegalStateException("no zk_packets_received in mntr");
    }
}
