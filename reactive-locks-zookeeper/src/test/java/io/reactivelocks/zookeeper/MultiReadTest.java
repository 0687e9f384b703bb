package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Lease;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockStore;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link MultiRead} on the real server — one stat per path, empty for a missing node, under the client's
 * namespace — and the semaphore's renewal that uses it: of permits renewed together, one whose node was
 * deleted is lost, the others stay held.
 */
class MultiReadTest {

    private static final Duration STEP = Duration.ofSeconds(10);

    private static ZooKeeperTestSupport zk;
    private static CuratorFramework client;

    @BeforeAll
    static void startServer() throws InterruptedException {
        zk = ZooKeeperTestSupport.start();
        client = ZooKeeperTestSupport.curator(zk.server.connectString(), Duration.ofSeconds(20));
        client.blockUntilConnected(20, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (client != null) {
            client.close();
        }
        if (zk != null) {
            zk.checker().delete().deletingChildrenIfNeeded().forPath(zk.root);
            zk.close();
        }
    }

    @Test
    void oneStatPerPathEmptyWhereMissingAndUnderTheNamespace() throws Exception {
        String a = zk.root + "/multi-read/a";
        String b = zk.root + "/multi-read/b";
        zk.checker().create().creatingParentsIfNeeded().forPath(a);
        zk.checker().create().creatingParentsIfNeeded().forPath(b, new byte[] {1, 2, 3});
        Stat sa = zk.checker().checkExists().forPath(a);
        Stat sb = zk.checker().checkExists().forPath(b);

        List<Optional<Stat>> stats = MultiRead.stats(client, List.of(a, zk.root + "/multi-read/missing", b)).block(STEP);
        assertThat(stats).hasSize(3);
        assertThat(stats.get(0)).get().extracting(Stat::getCzxid).isEqualTo(sa.getCzxid());
        assertThat(stats.get(1)).isEmpty();
        assertThat(stats.get(2)).get().extracting(Stat::getCzxid).isEqualTo(sb.getCzxid());

        CuratorFramework namespaced = client.usingNamespace(zk.root.substring(1) + "-ns");
        namespaced.create().creatingParentsIfNeeded().forPath("/x");
        Stat sx = namespaced.checkExists().forPath("/x");
        assertThat(MultiRead.stats(namespaced, List.of("/x")).block(STEP)).singleElement()
                .satisfies(s -> assertThat(s).get().extracting(Stat::getCzxid).isEqualTo(sx.getCzxid()));
        zk.checker().delete().deletingChildrenIfNeeded().forPath(zk.root + "-ns");
    }

    @Test
    void ofPermitsRenewedTogetherTheOneWhoseNodeWentIsLostAndTheOthersStay() {
        LockStore store = ZooKeeperLocks.connect(client, zk.options());
        try {
            Map<String, Integer> renewed = new ConcurrentHashMap<>();
            Semaphore semaphores = store.semaphores(LockOptions.builder().leaseTime(Duration.ofSeconds(3))
                    .listener(new LockListener() {
                        @Override
                        public void onRenewed(String name, long token) {
                            renewed.merge(name, 1, Integer::sum);
                        }
                    }).build());
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(semaphores.acquire("renewed-together-" + i, 1).block(STEP));
            }
            assertThat(store.admin().forceRelease("renewed-together-1").block(STEP)).hasSize(1); // its node deleted
            held.get(1).lost().block(STEP); // the next renewal (every second) finds its node gone
            int from0 = renewed.getOrDefault("renewed-together-0", 0);
            int from2 = renewed.getOrDefault("renewed-together-2", 0);
            await().atMost(STEP).until(() -> renewed.getOrDefault("renewed-together-0", 0) >= from0 + 2
                    && renewed.getOrDefault("renewed-together-2", 0) >= from2 + 2); // renewed on, twice more
            assertThat(held.get(0).isValid()).as("a permit renewed beside it").isTrue();
            assertThat(held.get(2).isValid()).as("a permit renewed beside it").isTrue();
            held.get(0).release().block(STEP);
            held.get(2).release().block(STEP);
        } finally {
            store.close().block(STEP);
        }
    }
}
