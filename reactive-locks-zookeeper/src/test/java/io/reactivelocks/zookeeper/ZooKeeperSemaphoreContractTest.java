package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import io.reactivelocks.test.SemaphoreContract;
import java.time.Duration;
import java.util.List;
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
    private static CuratorFramework inspector;

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
        inspector = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION);
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
