package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The one-transaction grant of {@link ZooKeeperReadWriteStore} and {@link ZooKeeperSemaphoreStore}: on a
 * free name the create's answer alone grants (token = the node's czxid), and a name with nodes goes
 * by the listing as before — a second reader still holds, a writer waits, permits beyond N wait.
 */
class ZooKeeperReadWriteFastPathTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final Duration LEASE = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;
    private ZooKeeperReadWriteStore rw;
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
        rw = new ZooKeeperReadWriteStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION), true,
                zk.root + "-rw", zk.options().acl());
        semaphores = new ZooKeeperSemaphoreStore(ZooKeeperTestSupport.curator(zk.server.connectString(), ZooKeeperTestSupport.SESSION),
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
}
