package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.test.RequestCountContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

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

    /**
     * A contended semaphore (N = 2, two holders, {@value #WAITERS} waiters queued one at a time on one
     * client): once the holders release, each freed permit goes to the next waiter in line, which
     * releases at once. The waiters of a client see the name's children through one persistent watch
     * ({@link PermitLine}), so a handoff costs the release's delete alone: no listing, no watch per
     * wait, no baton written for the waiter behind. Counted: the 2 + {@value #WAITERS} deletes and the
     * watch's removal a linger after the last waiter left ({@link PermitLines.LINGER}).
     */
    @Test
    void aContendedSemaphoreHandsEachPermitOnWithTheReleaseAlone() throws InterruptedException {
        Semaphore semaphores = store(LONG).semaphores(options(LONG));
        String name = name("permits");
        List<Lease> holders = List.of(semaphores.acquire(name, 2).block(STEP), semaphores.acquire(name, 2).block(STEP));
        CountDownLatch granted = new CountDownLatch(WAITERS);
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        List<Disposable> waits = new ArrayList<>();
        try {
            for (int i = 0; i < WAITERS; i++) {
                waits.add(semaphores.acquire(name, 2)
                        .flatMap(l -> {
                            tokens.add(l.token());
                            return l.release();
                        })
                        .subscribe(null, errors::add, granted::countDown));
                quietCount(); // queued one at a time, each behind the one before it
            }
            assertThat(semaphores.metrics().pendingAcquireCount()).as("waiting").isEqualTo(WAITERS);
            long before = quietCount();
            holders.forEach(h -> h.release().block(STEP));
            assertThat(granted.await(STEP.toMillis(), TimeUnit.MILLISECONDS))
                    .as("every waiter granted by the watch alone (errors %s)", errors).isTrue();
            long requests = quietCountAfter(PermitLines.LINGER.plusMillis(500)) - before;
            assertThat(errors).isEmpty();
            assertThat(tokens).hasSize(WAITERS).isSorted().doesNotHaveDuplicates();
            System.out.printf("%s contended semaphore: %d requests for %d handoffs%n", getClass().getSimpleName(), requests, WAITERS);
            assertThat(requests).as("requests: the deletes of 2 holders and %d waiters, the watch's removal", WAITERS)
                    .isBetween(2L + WAITERS, 2L + WAITERS + 1);
        } finally {
            waits.forEach(Disposable::dispose);
        }
    }
}
