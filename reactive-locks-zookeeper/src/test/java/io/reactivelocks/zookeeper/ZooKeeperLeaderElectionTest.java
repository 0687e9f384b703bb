package io.reactivelocks.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

class ZooKeeperLeaderElectionTest {

    private static final Duration STEP = Duration.ofSeconds(15);

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

    private static ZooKeeperLeaderElection election() {
        ZooKeeperLockOptions o = zk.options();
        return ZooKeeperLeaderElection.over(zk.backend(o.mutate().root(o.root() + "-election").build()),
                LockOptions.builder().requestTimeout(Duration.ofSeconds(3)).build());
    }

    @Test
    void theFirstCandidateLeadsObserversSeeItsValueAndTheNextLeadsAfterItResigns() {
        String name = "scheduler-" + UUID.randomUUID();
        ZooKeeperLeaderElection one = election();
        ZooKeeperLeaderElection two = election();
        ZooKeeperLeaderElection watcher = election();
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        Disposable observing = watcher.observe(name).subscribe(seen::add);
        List<Leadership> oneTerms = new CopyOnWriteArrayList<>();
        List<Leadership> twoTerms = new CopyOnWriteArrayList<>();
        try {
            await().atMost(STEP).until(() -> seen.contains(Optional.empty()));
            Disposable c1 = one.campaign(name, "node-1").subscribe(oneTerms::add);
            await().atMost(STEP).until(() -> !oneTerms.isEmpty());
            Disposable c2 = two.campaign(name, "node-2").subscribe(twoTerms::add);
            await().atMost(STEP).until(() -> zk.children(name).isEmpty() && electionChildren(name) == 2);
            StepVerifier.create(watcher.leader(name)).assertNext(l -> {
                assertThat(l.value()).isEqualTo("node-1");
                assertThat(l.token()).isEqualTo(oneTerms.get(0).token());
            }).expectComplete().verify(STEP);
            await().atMost(STEP).until(() -> seen.stream().anyMatch(o -> o.map(l -> l.value().equals("node-1")).orElse(false)));
            assertThat(twoTerms).isEmpty();

            oneTerms.get(0).resign().block(STEP);
            await().atMost(STEP).until(() -> !twoTerms.isEmpty());
            assertThat(twoTerms.get(0).token()).isGreaterThan(oneTerms.get(0).token());
            await().atMost(STEP).until(() -> seen.stream().anyMatch(o -> o.map(l -> l.value().equals("node-2")).orElse(false)));
            assertThat(watcher.leader(name).block(STEP).value()).isEqualTo("node-2");
            c1.dispose();
            c2.dispose();
        } finally {
            observing.dispose();
            one.close().block(STEP);
            two.close().block(STEP);
            watcher.close().block(STEP);
        }
        await().atMost(STEP).untilAsserted(() -> assertThat(zk.nodes()).isEmpty());
        StepVerifier.create(election().leader(name)).expectComplete().verify(STEP);
    }

    private static int electionChildren(String name) {
        try {
            return zk.checker().getChildren().forPath(new ZNodeNames(zk.root + "-election").lockPath(name)).size();
        } catch (Exception e) {
            return -1;
        }
    }
}
