package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.test.ReadWriteLockContract;
import io.reactivelocks.test.fault.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The read-write lock contract against a real ZooKeeper (a grant lives as long as the session: the
 * suite's lease time is the 2 s session timeout), plus the ZooKeeper specifics: ephemeral
 * sequential {@code read-}/{@code write-} nodes in Curator's order, the czxid as token, and no node
 * left (waiting readers' nodes included) after each test.
 */
class ZooKeeperReadWriteLockContractTest extends ReadWriteLockContract {

    private static ZooKeeperTestSupport zk;
    private static CuratorFramework inspector;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.startOwn();
        inspector = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION);
    }

    @AfterAll
    static void stopServer() {
        if (inspector != null) {
            inspector.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    private static String root() {
        return zk.root + "-rw";
    }

    @Override
    protected ReadWriteStore newStore() {
        return new ZooKeeperReadWriteStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION),
                true, root(), zk.options().acl());
    }

    private FaultProxy holderProxy;

    /** The crashing holder talks through a proxy, so that its session can be cut off for real. */
    @Override
    protected ReadWriteStore holderStore() {
        holderProxy = FaultProxy.start(zk.server.host(), zk.server.port());
        return new ZooKeeperReadWriteStore(ZooKeeperTestSupport.curator(holderProxy.host() + ":" + holderProxy.port(),
                ZooKeeperTestSupport.SESSION), true, root(), zk.options().acl());
    }

    /** A partition: the server expires the holder's session (and its ephemeral nodes) after the session timeout. */
    @Override
    protected void crash(ReadWriteStore store) {
        holderProxy.blackhole();
    }

    @AfterEach
    void closeHolderProxyAndCheckNoNodeLeft() throws Exception {
        if (holderProxy != null) {
            holderProxy.close();
            holderProxy = null;
        }
        // test thread: blocking is fine here; containers may stay until the server reaps them, their children may not.
        // A test leaves up to a thousand names' containers: two requests tell whether any has a child — every node
        // below the root counted first, then the names (a container reaped in between only fails this poll, never
        // hides a child); each name is listed only to say which one when they differ (a thousand reads in turn took
        // over the await's 10 s on a loaded machine)
        await().atMost(STEP).untilAsserted(() -> {
            if (inspector.checkExists().forPath(root()) == null) {
                return;
            }
            int below = inspector.getZookeeperClient().getZooKeeper().getAllChildrenNumber(root());
            List<String> names = inspector.getChildren().forPath(root());
            if (below <= names.size()) {
                return;
            }
            for (String name : names) {
                List<String> left;
                try {
                    left = inspector.getChildren().forPath(root() + "/" + name);
                } catch (org.apache.zookeeper.KeeperException.NoNodeException reaped) {
                    continue; // an empty container the server reaped between the two reads: nothing left there
                }
                assertThat(left).as("nodes left under %s", name).isEmpty();
            }
            assertThat(below).as("nodes below %s besides the %d names' containers", root(), names.size()).isLessThanOrEqualTo(names.size());
        });
    }

    @Override
    protected LockOptions options() {
        return super.options().mutate().leaseTime(ZooKeeperTestSupport.SESSION).build();
    }

    @Test
    void requestsAreEphemeralSequentialReadAndWriteNodesAndTheTokenTheCzxid() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION);
        LockStore store = ZooKeeperLocks.connect(c, zk.options());
        ReadWriteLock rw = store.readWriteLocks(ReadWriteLockOptions.of(options()));
        try {
            String name = name("nodes");
            Lease r = rw.read().acquire(name).block(STEP);
            AtomicReference<Lease> w = new AtomicReference<>();
            Disposable writer = rw.write().acquire(name).subscribe(w::set);
            String parent = new ZooKeeperReadWriteStore(c, false, root(), zk.options().acl()).path(name);
            await().atMost(STEP).until(() -> c.getChildren().forPath(parent).size() == 2);
            List<String> children = c.getChildren().forPath(parent); // test thread: blocking is fine here
            assertThat(children).anySatisfy(n -> assertThat(n).startsWith("read-" + r.owner() + "-"))
                    .anySatisfy(n -> assertThat(n).startsWith("write-"));
            for (String child : children) {
                Stat stat = c.checkExists().forPath(parent + "/" + child);
                assertThat(stat.getEphemeralOwner()).as("ephemeral").isEqualTo(c.getZookeeperClient().getZooKeeper().getSessionId());
                if (child.startsWith("read-")) {
                    assertThat(stat.getCzxid()).isEqualTo(r.token());
                }
            }
            r.release().block(STEP);
            await().atMost(STEP).until(() -> w.get() != null);
            assertThat(w.get().token()).isGreaterThan(r.token());
            w.get().release().block(STEP);
            writer.dispose();
            assertThat(c.getChildren().forPath(parent)).isEmpty();
        } finally {
            store.close().block(STEP);
            c.close();
        }
    }

    /**
     * No herd on the write side: a chain of 8 waiting writers behind a writer (each releases as soon
     * as it is granted). Each keeps its node and watches only its predecessor, so a handoff costs the
     * release's delete and the next writer's listing — about 2 requests, counted by the server
     * ({@code zk_packets_received}, which also counts pings and renewals: hence the spare).
     */
    @Test
    void aWriteHandoffWakesOnlyTheNextWriter() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION);
        LockStore store = ZooKeeperLocks.connect(c, zk.options());
        // a lease that outlasts the chain: with the contract's 2 s lease a waiter's safety timer (a third of it, at
        // least the backoff's cap) fired inside a chain that a loaded machine stretched past a second, and its extra
        // listing was counted (28 requests for a bound of 26 in a loaded run)
        ReadWriteLock rw = store.readWriteLocks(ReadWriteLockOptions.of(options().mutate().leaseTime(Duration.ofSeconds(30)).build()));
        int waiters = 8;
        try {
            String name = name("herd");
            String parent = new ZooKeeperReadWriteStore(c, false, root(), zk.options().acl()).path(name);
            Lease holder = rw.write().acquire(name).block(STEP);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                subs.add(rw.write().acquire(name).flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet())).subscribe());
            }
            // test thread: blocking is fine here; every writer queued and watching its predecessor
            await().atMost(Duration.ofSeconds(20)).until(() -> c.getChildren().forPath(parent).size() == waiters + 1
                    && watchedPaths() >= waiters);
            assertThat(granted.get()).isZero();
            long before = packetsReceived();
            holder.release().block(STEP);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(granted.get()).isEqualTo(waiters));
            long requests = packetsReceived() - before;
            subs.forEach(Disposable::dispose);
            System.out.printf("zookeeper read-write lock, %d waiting writers: %d requests for %d handoffs%n", waiters, requests, waiters);
            assertThat(requests).as("requests for %d handoffs", waiters).isLessThanOrEqualTo(3L * waiters + 2);
        } finally {
            store.close().block(STEP);
            c.close();
        }
    }

    private static long packetsReceived() {
        for (String line : zk.fourLetterWord("mntr").split("\\n")) {
            String[] kv = line.split("\\t");
            if (kv.length == 2 && kv[0].trim().equals("zk_packets_received")) {
                return Long.parseLong(kv[1].trim());
            }
        }
        throw new IllegalStateException("no zk_packets_received in mntr");
    }

    /** @return how many paths the server's sessions watch ({@code wchs}) */
    private static int watchedPaths() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("watching (\\d+) paths").matcher(zk.fourLetterWord("wchs"));
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }
}
