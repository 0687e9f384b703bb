package io.reactivelocks.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import io.reactivelocks.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/** Leader election on a real etcd: one leader at a time, in campaign order, observed by everyone. */
class EtcdLeaderElectionTest {

    private static final Duration STEP = Duration.ofSeconds(10);
    private static final LockOptions OPTIONS = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(2)).drift(0.05, Duration.ofMillis(20)).build();

    private static EtcdTestSupport etcd;
    private final List<Client> jetcds = new ArrayList<>();
    private final List<EtcdLeaderElection> elections = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        etcd = EtcdTestSupport.start();
    }

    @AfterAll
    static void stopServer() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @AfterEach
    void close() {
        elections.forEach(e -> e.close().block(STEP));
        elections.clear();
        jetcds.forEach(Client::close);
        jetcds.clear();
        assertThat(etcd.keys(etcd.prefix + "-election/")).as("election keys left").isEmpty();
    }

    private EtcdLeaderElection election() {
        Client c = EtcdTestSupport.client(etcd.server.host(), etcd.server.port());
        jetcds.add(c);
        EtcdLeaderElection e = EtcdLeaderElection.create(c, etcd.options(), OPTIONS);
        elections.add(e);
        return e;
    }

    private record Campaign(Disposable subscription, List<Leadership> terms, AtomicLong ended) {
        static Campaign of(EtcdLeaderElection e, String election, String value) {
            List<Leadership> terms = new CopyOnWriteArrayList<>();
            AtomicLong ended = new AtomicLong();
            Disposable d = e.campaign(election, value).subscribe(terms::add, x -> ended.set(-1), () -> ended.set(System.nanoTime()));
            return new Campaign(d, terms, ended);
        }
    }

    @Test
    void candidatesLeadOneAfterAnotherAndObserversSeeWhoLeads() {
        String name = "election-" + UUID.randomUUID();
        EtcdLeaderElection one = election();
        EtcdLeaderElection two = election();
        EtcdLeaderElection watcher = election();
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        Disposable observing = watcher.observe(name).subscribe(seen::add);
        Campaign first = Campaign.of(one, name, "node-1");
        try {
            await().atMost(STEP).until(() -> !first.terms().isEmpty());
            Campaign second = Campaign.of(two, name, "node-2");
            await().atMost(STEP).until(() -> etcd.keys(etcd.prefix + "-election/").size() == 2);
            assertThat(second.terms()).isEmpty();
            StepVerifier.create(watcher.leader(name))
                    .assertNext(l -> assertThat(l).isEqualTo(new Leader(name, "node-1", first.terms().get(0).token())))
                    .expectComplete().verify(STEP);
            await().atMost(STEP).until(() -> first.terms().size() >= 2); // renewed by the session keep-alive

            first.terms().get(0).resign().block(STEP);
            await().atMost(STEP).until(() -> first.ended().get() > 0);
            await().atMost(STEP).until(() -> !second.terms().isEmpty());
            Leadership next = second.terms().get(0);
            assertThat(next.value()).isEqualTo("node-2");
            assertThat(next.token()).isGreaterThan(first.terms().get(0).token());

            second.subscription().dispose(); // cancelling resigns
            await().atMost(STEP).until(() -> seen.size() >= 4);
            assertThat(seen).containsSubsequence(
                    Optional.empty(),
                    Optional.of(new Leader(name, "node-1", first.terms().get(0).token())),
                    Optional.of(new Leader(name, "node-2", next.token())),
                    Optional.empty());
        } finally {
            observing.dispose();
            first.subscription().dispose();
        }
    }

    @Test
    void aRevokedSessionEndsLeadershipAndTheNextCandidateLeads() {
        String name = "election-" + UUID.randomUUID();
        EtcdLeaderElection one = election();
        EtcdLeaderElection two = election();
        Campaign first = Campaign.of(one, name, "node-1");
        Campaign second = null;
        try {
            await().atMost(STEP).until(() -> !first.terms().isEmpty());
            second = Campaign.of(two, name, "node-2");
            Campaign s = second;
            await().atMost(STEP).until(() -> etcd.keys(etcd.prefix + "-election/").size() == 2);
            // etcd revokes the leader's session lease (as an operator or a lease expiry would)
            long lease = one.backend().sessionLeaseId().orElseThrow();
            etcd.checker().getLeaseClient().revoke(lease).join();
            await().atMost(STEP).until(() -> !s.terms().isEmpty());
            await().atMost(STEP).until(() -> first.ended().get() != 0);
            assertThat(first.ended().get()).isPositive();
            assertThat(s.terms().get(0).token()).isGreaterThan(first.terms().get(0).token());
        } finally {
            first.subscription().dispose();
            if (second != null) {
                second.subscription().dispose();
            }
        }
    }

    @Test
    void argumentsAreCheckedAtCallTime() {
        EtcdLeaderElection e = election();
        assertThatThrownBy(() -> e.campaign("", "v")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("election");
        assertThatThrownBy(() -> e.campaign("x", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("value");
        assertThatThrownBy(() -> e.observe(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("election");
    }
}
