package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import io.reactivelocks.test.fault.FaultProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * The semaphore contract against a real ZooKeeper (a permit lives as long as the session: the
 * suite's lease time is the 2 s session timeout), plus the ZooKeeper specifics: ephemeral
 * sequential nodes, the k nodes of a request created as one unit (contiguous sequences, one czxid),
 * the token {@code czxid * 65536 + index}.
 */
class ZooKeeperSemaphoreContractTest extends SemaphoreContract {

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

    @Override
    protected SemaphoreStore newStore() {
        return new ZooKeeperSemaphoreStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION),
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
    void theKPermitsOfARequestAreOneUnitOfEphemeralSequentialNodes() throws Exception {
        CuratorFramework c = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION);
        LockStore store = ZooKeeperLocks.connect(c, zk.options());
        Semaphore s = store.semaphores(options());
        try {
            String name = name("nodes");
            Lease first = s.acquire(name, 3).block(STEP);
            List<Lease> both = s.acquire(name, 3, 2, options()).block(STEP);
            String parent = new ZooKeeperSemaphoreStore(c, false, zk.root + "-semaphore", zk.options().acl()).path(name);
            List<ZNodeNames.Child> children = ZNodeNames.sorted(c.getChildren().forPath(parent)); // test thread: blocking is fine here
            assertThat(children).hasSize(3);
            Stat one = new Stat();
            assertThat(new String(c.getData().storingStatIn(one).forPath(parent + "/" + children.get(0).node()), StandardCharsets.US_ASCII))
                    .isEqualTo("3:0");
            assertThat(first.token()).as("a single permit: czxid * 65536").isEqualTo(one.getCzxid() * 65536);
            assertThat(children.get(2).sequence()).as("contiguous sequences").isEqualTo(children.get(1).sequence() + 1);
            for (int i = 0; i < 2; i++) {
                ZNodeNames.Child child = children.get(1 + i);
                Stat stat = new Stat();
                byte[] data = c.getData().storingStatIn(stat).forPath(parent + "/" + child.node());
                assertThat(stat.getEphemeralOwner()).as("ephemeral").isEqualTo(c.getZookeeperClient().getZooKeeper().getSessionId());
                assertThat(child.owner()).isEqualTo(both.get(i).owner());
                assertThat(new String(data, StandardCharsets.US_ASCII)).isEqualTo("3:" + i);
                assertThat(both.get(i).token()).as("token of permit %d", i).isEqualTo(stat.getCzxid() * 65536 + i);
            }
            assertThat(both.get(0).token() >> 16).as("one transaction: one czxid").isEqualTo(both.get(1).token() >> 16);
            // one permit of the unit released alone frees its place at once
            both.get(0).release().block(STEP);
            assertThat(s.tryAcquire(name, 3).block(STEP)).as("a permit beside 2 of the 3").isNotNull()
                    .satisfies(l -> l.release().block(STEP));
            first.release().block(STEP);
            both.get(1).release().block(STEP);
            assertThat(c.getChildren().forPath(parent)).isEmpty();
        } finally {
            store.close().block(STEP);
            c.close();
        }
    }

    @Test
    void moreThan65535PermitsAtOnceAreRefused() {
        SemaphoreStore store = newStore();
        try {
            StepVerifier.create(store.tryGrant(name("big"), java.util.Collections.nCopies(65536, "o"), 70_000, true,
                            options().leaseTime()))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count"))
                    .verify(STEP);
            // and the semaphore refuses it at call time, naming the argument
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> io.reactivelocks.semaphore.Semaphore.create(newStore())
                            .acquire(name("big"), 70_000, 65_536, options()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count must be at most 65535");
        } finally {
            store.close().block(STEP);
        }
    }

    /** The server's own count ({@code mntr}'s {@code zk_packets_received}, pings and renewals included). */
    @Override
    protected long serverRequests() {
        return packetsReceived();
    }

    /** Per handoff: the release's delete and the next waiter's listing; spare: one for pings. */
    @Override
    protected int requestsPerHandoff() {
        return 3;
    }

    /** A permit lives as long as the session: the chain runs on the suite's session lease. */
    @Override
    protected Duration herdLeaseTime() {
        return ZooKeeperTestSupport.SESSION;
    }

    /** The child version of the name's node: every create and delete of a permit or waiter node. */
    @Override
    protected long serverChanges(String name) {
        try {
            Stat stat = inspector.checkExists().forPath(new ZooKeeperSemaphoreStore(inspector, false, zk.root + "-semaphore",
                    zk.options().acl()).path(name)); // test thread: blocking is fine here
            return stat == null ? 0 : stat.getCversion();
        } catch (Exception e) {
            throw new IllegalStateException(e);
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
