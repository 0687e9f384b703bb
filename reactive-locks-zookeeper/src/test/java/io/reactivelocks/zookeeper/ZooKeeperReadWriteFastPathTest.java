package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The one-transaction grant of {@link ZooKeeperReadWriteStore} and {@link ZooKeeperSemaphoreStore}: on a
 * free name the create's answer alone grants (token = the node's czxid), and a name with nodes goes
 * by the listing as before — a second reader still holds, a writer waits, permits beyond N wait. A
 * reader beside readers is granted by the create alone too (no writer mark), and a writer's mark
 * lives exactly as long as its write node.
 */
class ZooKeeperReadWriteFastPathTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Duration LEASE = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;
    private ZooKeeperReadWriteStore rw;
    private CuratorCalls rwCalls;
    private ZooKeeperSemaphoreStore semaphores;

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
    void stores() {
        CuratorFramework rwClient = ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION);
        rwCalls = ZooKeeperTestSupport.callsOf(rwClient);
        rw = new ZooKeeperReadWriteStore(rwClient, true, zk.root + "-rw", zk.options().acl());
        semaphores = new ZooKeeperSemaphoreStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION),
                true, zk.root + "-semaphore", zk.options().acl());
    }

    @AfterEach
    void close() {
        rw.close().block(STEP);
        semaphores.close().block(STEP);
    }

    private PermitGrant grant(String name, String owner, LockMode mode) {
        return rw.tryGrant(name, owner, mode, true, true, LEASE).block(STEP);
    }

    private static long token(PermitGrant g) {
        assertThat(g).isInstanceOf(PermitGrant.Granted.class);
        List<Long> tokens = ((PermitGrant.Granted) g).tokens();
        assertThat(tokens).hasSize(1);
        return tokens.get(0);
    }

    /** @return the czxid of the one child of {@code parent} whose name holds {@code owner} */
    private static long czxidOf(String parent, String owner) throws Exception {
        List<String> mine = zk.checker().getChildren().forPath(parent).stream().filter(c -> c.contains(owner)).toList();
        assertThat(mine).as("nodes of " + owner).hasSize(1);
        Stat stat = zk.checker().checkExists().forPath(parent + "/" + mine.get(0));
        return stat.getCzxid();
    }

    @Test
    void readersAndWritersOnAFreeNameAreGrantedByTheCreateWithTheirNodesCzxid() throws Exception {
        String name = "rw-fast-" + UUID.randomUUID();
        String p = rw.path(name);

        long r1 = token(grant(name, "reader-1", LockMode.READ));
        assertThat(r1).as("a fast reader's token").isEqualTo(czxidOf(p, "reader-1"));
        long r2 = token(grant(name, "reader-2", LockMode.READ)); // by the listing: a reader before it
        assertThat(r2).isEqualTo(czxidOf(p, "reader-2")).isGreaterThan(r1);
        assertThat(grant(name, "writer-1", LockMode.WRITE)).as("a writer while readers hold").isInstanceOf(PermitGrant.Busy.class);
        assertThat(zk.checker().getChildren().forPath(p)).as("the waiting writer keeps its place").hasSize(3);
        assertThat(grant(name, "reader-3", LockMode.READ)).as("a reader behind a waiting writer").isInstanceOf(PermitGrant.Busy.class);
        assertThat(rw.release(name, "reader-3").block(STEP)).isTrue();

        assertThat(rw.release(name, "reader-1").block(STEP)).isTrue();
        assertThat(rw.release(name, "reader-2").block(STEP)).isTrue();
        long w1 = token(grant(name, "writer-1", LockMode.WRITE)); // its place, listed again
        assertThat(w1).isEqualTo(czxidOf(p, "writer-1")).isGreaterThan(r2);
        assertThat(rw.release(name, "writer-1").block(STEP)).isTrue();
        assertThat(zk.checker().getChildren().forPath(p)).as("nodes left").isEmpty();

        long last = w1;
        for (int i = 0; i < 5; i++) { // alternating on a free name: each one by the create alone
            LockMode mode = i % 2 == 0 ? LockMode.WRITE : LockMode.READ;
            long t = token(grant(name, "owner-" + i, mode));
            assertThat(t).as("token " + i).isEqualTo(czxidOf(p, "owner-" + i)).isGreaterThan(last);
            last = t;
            assertThat(rw.release(name, "owner-" + i).block(STEP)).isTrue();
        }
        assertThat(zk.checker().getChildren().forPath(p)).as("nodes left").isEmpty();
        assertThat(zk.checker().getData().forPath(p)).as("the name's node's data").isEmpty();
    }

    @Test
    void aSingleAttemptRefusedLeavesNothingAndAGrantOnAFreshNameCreatesItsNode() throws Exception {
        String name = "rw-single-" + UUID.randomUUID();
        String p = rw.path(name);
        assertThat(zk.checker().checkExists().forPath(p)).as("no node before the first grant").isNull();
        long w = token(rw.tryGrant(name, "writer", LockMode.WRITE, true, false, LEASE).block(STEP));
        assertThat(w).isEqualTo(czxidOf(p, "writer"));
        assertThat(rw.tryGrant(name, "reader", LockMode.READ, true, false, LEASE).block(STEP)).isInstanceOf(PermitGrant.Busy.class);
        assertThat(zk.checker().getChildren().forPath(p)).as("only the writer's node").hasSize(1);
        assertThat(rw.release(name, "writer").block(STEP)).isTrue();
        assertThat(zk.checker().getChildren().forPath(p)).as("nodes left").isEmpty();
    }

    @Test
    void permitsWithinNAreGrantedByTheCreateAndTheNextOneWaits() throws Exception {
        String name = "semaphore-fast-" + UUID.randomUUID();
        String p = semaphores.path(name);
        long last = 0;
        for (String o : List.of("a", "b")) {
            PermitGrant g = semaphores.tryGrant(name, List.of("permit-" + o), 2, true, LEASE).block(STEP);
            long t = token(g);
            assertThat(t).isEqualTo(ZooKeeperPermitNodes.token(czxidOf(p, "permit-" + o), 0)).isGreaterThan(last);
            last = t;
        }
        assertThat(semaphores.tryGrant(name, List.of("permit-c"), 2, true, LEASE).block(STEP)).as("a third of 2")
                .isInstanceOf(PermitGrant.Busy.class);
        assertThat(semaphores.release(name, "permit-a").block(STEP)).isTrue();
        long c = token(semaphores.tryGrant(name, List.of("permit-c"), 2, true, LEASE).block(STEP));
        assertThat(c).isEqualTo(ZooKeeperPermitNodes.token(czxidOf(p, "permit-c"), 0)).isGreaterThan(last);
        for (String o : List.of("b", "c")) {
            assertThat(semaphores.release(name, "permit-" + o).block(STEP)).isTrue();
        }
        // a unit of two on a free name of N = 2: both at once, one czxid
        PermitGrant unit = semaphores.tryGrant(name, List.of("u-0", "u-1"), 2, true, LEASE).block(STEP);
        assertThat(unit).isInstanceOf(PermitGrant.Granted.class);
        long z = czxidOf(p, "u-0");
        assertThat(((PermitGrant.Granted) unit).tokens()).containsExactly(ZooKeeperPermitNodes.token(z, 0), ZooKeeperPermitNodes.token(z, 1));
        for (String o : List.of("u-0", "u-1")) {
            assertThat(semaphores.release(name, o).block(STEP)).isTrue();
        }
        assertThat(zk.checker().getChildren().forPath(p)).as("nodes left").isEmpty();
    }

    @Test
    void aReaderBesideReadersIsGrantedByItsTransactionAloneAndBehindAWriterByTheListing() throws Exception {
        String name = "rw-readers-" + UUID.randomUUID();
        String p = rw.path(name);
        long r1 = token(grant(name, "reader-1", LockMode.READ));

        int before = rwCalls.operations().size();
        long r2 = token(grant(name, "reader-2", LockMode.READ));
        assertThat(rw.release(name, "reader-2").block(STEP)).isTrue();
        assertThat(rwCalls.operations().subList(before, rwCalls.operations().size()))
                .as("a reader beside a reader: its transaction and its delete, no listing")
                .hasSize(2);
        assertThat(r2).isGreaterThan(r1);

        assertThat(grant(name, "writer", LockMode.WRITE)).as("a writer behind a reader").isInstanceOf(PermitGrant.Busy.class);
        assertThat(grant(name, "reader-3", LockMode.READ)).as("a reader behind the waiting writer's mark")
                .isInstanceOf(PermitGrant.Busy.class);
        assertThat(rw.release(name, "reader-3").block(STEP)).isTrue();
        assertThat(rw.release(name, "reader-1").block(STEP)).isTrue();
        long w = token(grant(name, "writer", LockMode.WRITE));
        assertThat(w).isEqualTo(czxidOf(p, "writer")).isGreaterThan(r2);
        assertThat(grant(name, "reader-4", LockMode.READ)).as("a reader while the writer holds").isInstanceOf(PermitGrant.Busy.class);
        assertThat(rw.release(name, "writer").block(STEP)).isTrue();
        assertThat(token(grant(name, "reader-4", LockMode.READ))).isGreaterThan(w);
        assertThat(rw.release(name, "reader-4").block(STEP)).isTrue();
        assertThat(zk.checker().getChildren().forPath(p)).as("nodes left").isEmpty();
        assertThat(zk.checker().getChildren().forPath(rw.marksPath(name))).as("marks left").isEmpty();
    }

    @Test
    void aNameOnlyEverReadLeavesAMarksContainerTheServerMayPrune() throws Exception {
        String name = "rw-read-only-" + UUID.randomUUID();
        token(grant(name, "reader", LockMode.READ));
        assertThat(rw.release(name, "reader").block(STEP)).isTrue();
        Stat marks = zk.checker().checkExists().forPath(rw.marksPath(name));
        assertThat(marks).as("the marks' container, made for the reader's transaction").isNotNull();
        assertThat(marks.getNumChildren()).isZero();
        // ZooKeeper's container manager prunes an empty container only once it has had a child
        assertThat(marks.getCversion()).as("the container has had a child").isPositive();
    }

    @Test
    void aWritersMarkLivesExactlyAsLongAsItsWriteNode() throws Exception {
        String name = "rw-marks-" + UUID.randomUUID();
        String marks = rw.marksPath(name);
        token(grant(name, "writer-1", LockMode.WRITE));
        assertThat(zk.checker().getChildren().forPath(marks)).as("the holder's mark").containsExactly("writer-1");
        assertThat(grant(name, "writer-2", LockMode.WRITE)).isInstanceOf(PermitGrant.Busy.class);
        assertThat(zk.checker().getChildren().forPath(marks)).as("a waiting writer's mark too").containsExactlyInAnyOrder("writer-1", "writer-2");
        assertThat(rw.release(name, "writer-2").block(STEP)).as("the waiting writer gives up").isTrue();
        assertThat(rw.tryGrant(name, "writer-3", LockMode.WRITE, true, false, LEASE).block(STEP)).as("a single attempt refused")
                .isInstanceOf(PermitGrant.Busy.class);
        assertThat(rw.tryGrant(name, "writer-4", LockMode.WRITE, false, true, LEASE).block(STEP)).as("a reader-preferring writer looks first")
                .isInstanceOf(PermitGrant.Busy.class);
        assertThat(zk.checker().getChildren().forPath(marks)).as("only the holder's mark").containsExactly("writer-1");

        // released by another store (an admin's release: the node found by a listing)
        ZooKeeperReadWriteStore other = new ZooKeeperReadWriteStore(
                ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.STEADY_SESSION), true, zk.root + "-rw", zk.options().acl());
        try {
            assertThat(other.release(name, "writer-1").block(STEP)).isTrue();
        } finally {
            other.close().block(STEP);
        }
        assertThat(zk.checker().getChildren().forPath(marks)).as("marks left").isEmpty();
        assertThat(zk.checker().getChildren().forPath(rw.path(name))).as("nodes left").isEmpty();

        // a reader-preferring writer on a free name: granted by its transaction, with its mark
        long w = token(rw.tryGrant(name, "writer-5", LockMode.WRITE, false, true, LEASE).block(STEP));
        assertThat(w).isEqualTo(czxidOf(rw.path(name), "writer-5"));
        assertThat(zk.checker().getChildren().forPath(marks)).containsExactly("writer-5");
        assertThat(rw.release(name, "writer-5").block(STEP)).isTrue();
        assertThat(zk.checker().getChildren().forPath(marks)).as("marks left").isEmpty();
    }

    @Test
    void aMarkWithoutItsWriteNodeOnlySendsReadersToTheListingAndItsOwnerDropsIt() throws Exception {
        String name = "rw-orphan-" + UUID.randomUUID();
        // a write node deleted by hand: its mark stays behind
        token(grant(name, "ghost", LockMode.WRITE));
        String node = zk.checker().getChildren().forPath(rw.path(name)).get(0);
        zk.checker().delete().forPath(rw.path(name) + "/" + node);

        long r = token(grant(name, "reader", LockMode.READ));
        assertThat(r).as("a reader granted by the listing").isEqualTo(czxidOf(rw.path(name), "reader"));
        assertThat(rw.release(name, "reader").block(STEP)).isTrue();

        // the mark's owner asks again: its transaction fails on the mark, which it drops, then it is granted
        rw.release(name, "ghost").block(STEP); // forget the place this store knew (gone): drops the mark as well
        zk.checker().create().withMode(CreateMode.EPHEMERAL).forPath(rw.marksPath(name) + "/ghost");
        long g = token(grant(name, "ghost", LockMode.WRITE));
        assertThat(g).isEqualTo(czxidOf(rw.path(name), "ghost")).isGreaterThan(r);
        assertThat(zk.checker().getChildren().forPath(rw.marksPath(name))).containsExactly("ghost");
        assertThat(rw.release(name, "ghost").block(STEP)).isTrue();
        assertThat(zk.checker().getChildren().forPath(rw.marksPath(name))).as("marks left").isEmpty();
        assertThat(zk.checker().getChildren().forPath(rw.path(name))).as("nodes left").isEmpty();
    }
}
