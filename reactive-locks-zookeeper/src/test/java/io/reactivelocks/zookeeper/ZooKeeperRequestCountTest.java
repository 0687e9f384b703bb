package io.reactivelocks.zookeeper;

import io.reactivelocks.LockStore;
import io.reactivelocks.test.RequestCountContract;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Requests per operation as ZooKeeper counts them, on a server of this class alone: {@code mntr}'s
 * {@code zk_packets_received}, less the four-letter words that read it (each counts as one). No
 * ping falls inside a counted window: a ZooKeeper client pings after 10 s without sending (sooner
 * with a short session), so the one client here has a 60-second session and is never idle that long
 * while the class runs, and the fixture's idle checking client is closed at once.
 */
class ZooKeeperRequestCountTest extends RequestCountContract {

    private static ZooKeeperTestSupport zk;
    private static CuratorFramework client;
    private static long reads;

    @BeforeAll
    static void startServer() throws InterruptedException {
        zk = ZooKeeperTestSupport.startOwn();
        zk.checker().close(); // idle, it would ping every 10 s; the fixture's close() closes it again, a no-op
        client = ZooKeeperTestSupport.curator(zk.server.connectString(), LONG);
        client.blockUntilConnected(20, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopServer() {
        if (client != null) {
            client.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    /** The lease is the session's; each held lock's node is confirmed every third of {@code leaseTime}. */
    @Override
    protected LockStore connect(Duration leaseTime) {
        return ZooKeeperLocks.connect(client, zk.options().mutate().confirmationInterval(leaseTime.dividedBy(3)).build());
    }

    /**
     * A name's node emptied by a release is deleted {@link LockNodeJanitor#PRUNE_DELAY} later (up to
     * twice that while the name is being used again), a timer a window may or may not hold: the prune
     * after a test's last release (1), and the prune of the name after the warm-up pair racing the
     * first counted acquire (the prune, the acquire's create refused for want of its parent, the
     * parent's create: 3).
     */
    @Override
    protected long allowance(Operation operation) {
        return switch (operation) {
            case LOCK_PAIR, SEMAPHORE_PAIR, READ_PAIR, READ_BESIDE_READER_PAIR, WRITE_PAIR, FAIR_PAIR -> 1 + 3;
            case HANDOFF -> 1;
            case PERMIT_RENEWAL -> 0;
            case RENEWAL_TICK -> 0;
        };
    }

    @Override
    protected synchronized long serverRequests() {
        reads++;
        for (String line : zk.fourLetterWord("mntr").split("\n")) {
            String[] kv = line.split("\t");
            if (kv.length == 2 && kv[0].trim().equals("zk_packets_received")) {
                return Long.parseLong(kv[1].trim()) - reads;
            }
        }
        throw new IllegalStateException("no zk_packets_received in mntr");
    }

    @Override
    protected double requestsPer(Operation operation) {
        return switch (operation) {
            // the lock queue (mutex, fair lock): once the backend knows the lock free at the lock node's data
            // version, one transaction (setData at that version + create the owner's node: first, granted
            // without a listing), then delete the node
            case LOCK_PAIR, FAIR_PAIR -> 2;
            // semaphore, read-write lock: one transaction (setData of the name's node, whose stat in the answer
            // tells the children before ours — none, or fewer than N: granted without a listing — + create the
            // owner's sequential node), then delete the node
            case SEMAPHORE_PAIR, READ_PAIR, WRITE_PAIR -> 2;
            // a reader beside a reader: its transaction counts the name's writer marks (none: it holds without a
            // listing, see ZooKeeperReadWriteStore), then its delete
            case READ_BESIDE_READER_PAIR -> 2;
            // one exists on the held lock's node (pings are not needed while confirmations flow)
            // one read-only multi (a getData of each permit's node) renews every permit due in the tick
            case PERMIT_RENEWAL -> 1.0 / RENEWED_PERMITS;
            case RENEWAL_TICK -> 1;
            // per handoff the release's delete only: each waiter watches the node before it, whose deletion
            // makes it first; the chain adds the last grantee's delete: 6 + 1 = 7
            case HANDOFF -> (WAITERS + 1.0) / WAITERS;
        };
    }
}
