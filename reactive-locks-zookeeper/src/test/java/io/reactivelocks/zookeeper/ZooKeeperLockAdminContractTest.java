package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.admin.LockAdmin;
import io.reactivelocks.test.LockAdminContract;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The admin contract on a real ZooKeeper: every session has its own Curator client (its own
 * ZooKeeper session), as separate processes would, so a force-release deletes another session's
 * ephemeral node. The clients ask for 10 s sessions, as the store contract's: a lock's lease is
 * the session (the options' 3 s lease time applies to permits and read-write grants only), and
 * the evicted holder hears of its loss at its next confirmation, a third of that later.
 */
class ZooKeeperLockAdminContractTest extends LockAdminContract {

    private static final Duration SESSION = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;
    private static final List<CuratorFramework> CLIENTS = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() {
        zk = ZooKeeperTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        CLIENTS.forEach(CuratorFramework::close);
        CLIENTS.clear();
        if (zk != null) {
            zk.close();
        }
    }

    @Override
    protected LockStore connect() {
        CuratorFramework client = ZooKeeperTestSupport.curator(zk.server.connectString(), SESSION);
        CLIENTS.add(client);
        return ZooKeeperLocks.connect(client, zk.options());
    }

    @Test
    void theListCountsTheWaitersInTheLockQueueAndAForceReleaseGrantsTheFirstOfThem() {
        LockOptions waits = options().mutate().leaseTime(Duration.ofSeconds(60)).waitTimeout(Duration.ofSeconds(30)).build();
        LockAdmin admin = store().admin();
        String name = prefix("waiters") + "lock";
        Lease held = store().locks(waits).acquire(name).block(STEP);
        Mono<Lease> first = store().locks(waits).acquire(name).cache();
        first.subscribe(l -> { }, e -> { });
        await().atMost(STEP).untilAsserted(() -> assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.waiters()).isEqualTo(1)));
        Mono<Lease> second = store().locks(waits).acquire(name).cache();
        second.subscribe(l -> { }, e -> { });
        await().atMost(STEP).untilAsserted(() -> assertThat(admin.list(name).collectList().block(STEP)).singleElement()
                .satisfies(g -> assertThat(g.waiters()).as("the holder not counted").isEqualTo(2)));

        assertThat(admin.forceRelease(name).block(STEP)).singleElement().satisfies(g -> assertThat(g.token()).isEqualTo(held.token()));

        Lease granted = first.block(STEP); // the queue is FIFO: the first waiter is next
        assertThat(admin.list(name).collectList().block(STEP)).singleElement().satisfies(g -> {
            assertThat(g.token()).isEqualTo(granted.token());
            assertThat(g.owner()).isEqualTo(granted.owner());
            assertThat(g.waiters()).isEqualTo(1);
        });
        granted.release().block(STEP);
        second.block(STEP).release().block(STEP);
    }
}
