package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.election.Leader;
import io.reactivelocks.election.LeaderElection;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.LockBackendContract.TestClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * The contract of {@link LeaderElection} on a store: a store's test extends this class and
 * supplies {@link #newBackend()} (an independent backend per call, as for
 * {@link LockBackendContract}). Each candidate runs on its own client, as separate processes
 * would; tests run in real time against the real store with short leases.
 */
public abstract class LeaderElectionContract {

    /** Generous bound for any single step that involves the real store. */
    protected static final Duration STEP = Duration.ofSeconds(10);

    private final List<TestClient> clients = new ArrayList<>();
    private final Set<String> names = Collections.synchronizedSet(new LinkedHashSet<>());

    /** @return a new, independent backend (its own connections) to the store under test */
    protected abstract LockBackend newBackend();

    /** @return options of the candidates' clients: a short lease, as in {@link LockBackendContract#options()} */
    protected LockOptions options() {
        return LockOptions.builder()
                .leaseTime(Duration.ofMillis(1200))
                .requestTimeout(Duration.ofSeconds(2))
                .drift(0.05, Duration.ofMillis(20))
                .build();
    }

    /**
     * Stops {@code client}'s renewals from reaching the store (see
     * {@link LockBackendContract#cutRenewals}); session stores override it with a real fault.
     *
     * @param client the client whose leadership must now run out
     */
    protected void cutRenewals(TestClient client) {
        client.faults().failRenewals(true);
    }

    /**
     * Checks that the store holds nothing for {@code names} any more; stores may also scan their key space.
     *
     * @param backend a live backend to ask
     * @param names   every election name the test used
     */
    protected void assertNothingLeft(LockBackend backend, Set<String> names) {
        for (String n : names) {
            await().atMost(STEP).untilAsserted(() ->
                    assertThat(backend.inspect(n).blockOptional(STEP)).as("leader of '%s' after the test", n).isEmpty());
        }
    }

    /** @return a new client over {@link #newBackend()} with {@link #options()} */
    protected TestClient newClient() {
        FaultInjectingBackend b = FaultInjectingBackend.wrap(newBackend());
        TestClient c = new TestClient(LockClient.create(b, options()), b);
        clients.add(c);
        return c;
    }

    /**
     * @param prefix a readable prefix
     * @return an election name unique to this run, remembered for the after-test check
     */
    protected String name(String prefix) {
        String n = prefix + "-" + UUID.randomUUID();
        names.add(n);
        return n;
    }

    @AfterEach
    void closeClientsAndCheckNothingLeft() {
        for (TestClient c : clients) {
            c.locks().close().block(STEP);
        }
        clients.clear();
        LockBackend check = newBackend();
        try {
            assertNothingLeft(check, names);
        } finally {
            check.close().block(STEP);
            names.clear();
        }
    }

    /** One candidate's campaign: the terms it was given and when (and how) its stream ended. */
    private record Campaign(Disposable subscription, List<Leadership> terms, AtomicLong ended) {
        static Campaign of(LeaderElection e, String name, String value, AtomicInteger leading, AtomicInteger overlaps) {
            List<Leadership> terms = new CopyOnWriteArrayList<>();
            AtomicLong ended = new AtomicLong();
            Disposable d = e.campaign(name, value)
                    .doOnNext(t -> {
                        if (terms.isEmpty() && leading.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        terms.add(t);
                    })
                    .doFinally(s -> {
                        if (!terms.isEmpty()) {
                            leading.decrementAndGet();
                        }
                    })
                    .subscribe(null, x -> ended.set(-1), () -> ended.set(System.nanoTime()));
            return new Campaign(d, terms, ended);
        }

        Leadership term() {
            return terms.get(0);
        }
    }

    @Test
    void oneLeaderAtATimeFailoverOnResignCancelAndCloseWithHigherTokens() {
        String name = name("election");
        AtomicInteger leading = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        TestClient one = newClient();
        TestClient two = newClient();
        TestClient three = newClient();
        LeaderElection watcher = LeaderElection.create(newClient().locks());
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        Disposable observing = watcher.observe(name).subscribe(seen::add);
        await().atMost(STEP).until(() -> !seen.isEmpty());
        StepVerifier.create(watcher.leader(name)).as("nobody leads yet").expectComplete().verify(STEP);

        Campaign first = Campaign.of(LeaderElection.create(one.locks()), name, "node-1", leading, overlaps);
        Campaign second = null;
        Campaign third = null;
        try {
            await().atMost(STEP).until(() -> !first.terms().isEmpty());
            second = Campaign.of(LeaderElection.create(two.locks()), name, "node-2", leading, overlaps);
            third = Campaign.of(LeaderElection.create(three.locks()), name, "node-3", leading, overlaps);
            Campaign s2 = second;
            Campaign s3 = third;
            await().atMost(STEP).until(() -> two.faults().grantCalls() >= 1 && three.faults().grantCalls() >= 1);
            Leadership t1 = first.term();
            StepVerifier.create(watcher.leader(name))
                    .expectNext(new Leader(name, "node-1", t1.owner(), t1.token())).expectComplete().verify(STEP);
            await().atMost(STEP).until(() -> first.terms().size() >= 2); // renewed: the term is emitted again
            assertThat(first.terms()).extracting(Leadership::token).containsOnly(t1.token());
            assertThat(s2.terms()).isEmpty();
            assertThat(s3.terms()).isEmpty();

            // resign: the stream completes, the next candidate leads with a higher token
            t1.resign().block(STEP);
            await().atMost(STEP).until(() -> first.ended().get() != 0);
            assertThat(first.ended().get()).as("completed, not errored").isPositive();
            await().atMost(STEP).until(() -> !s2.terms().isEmpty() || !s3.terms().isEmpty());
            Campaign next = s2.terms().isEmpty() ? s3 : s2;
            Campaign last = next == s2 ? s3 : s2;
            TestClient nextClient = next == s2 ? two : three;
            Leadership t2 = next.term();
            assertThat(t2.token()).isGreaterThan(t1.token());
            // the observer sees each leader before the next change (else two changes may reach it as one)
            await().atMost(STEP).until(() -> seen.contains(Optional.of(new Leader(name, t2.value(), t2.owner(), t2.token()))));

            // close the leader's client: the remaining candidate leads
            nextClient.locks().close().block(STEP);
            await().atMost(STEP).until(() -> !last.terms().isEmpty());
            Leadership t3 = last.term();
            assertThat(t3.token()).isGreaterThan(t2.token());
            await().atMost(STEP).until(() -> seen.contains(Optional.of(new Leader(name, t3.value(), t3.owner(), t3.token()))));
            assertThat(next.ended().get()).isNotZero();

            // cancel the campaign: resigns, nobody leads
            last.subscription().dispose();
            await().atMost(STEP).untilAsserted(() -> assertThat(seen).last().isEqualTo(Optional.empty()));
            assertThat(seen).containsSubsequence(
                    Optional.empty(),
                    Optional.of(new Leader(name, "node-1", t1.owner(), t1.token())),
                    Optional.of(new Leader(name, t2.value(), t2.owner(), t2.token())),
                    Optional.of(new Leader(name, t3.value(), t3.owner(), t3.token())),
                    Optional.empty());
            assertThat(overlaps).as("moments with two leaders").hasValue(0);
        } finally {
            observing.dispose();
            first.subscription().dispose();
            if (second != null) {
                second.subscription().dispose();
            }
            if (third != null) {
                third.subscription().dispose();
            }
        }
    }

    @Test
    void aLostLeadershipEndsItsStreamBeforeTheNextCandidateLeads() {
        String name = name("election-loss");
        AtomicInteger leading = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        TestClient one = newClient();
        TestClient two = newClient();
        Campaign first = Campaign.of(LeaderElection.create(one.locks()), name, "node-1", leading, overlaps);
        Campaign second = null;
        try {
            await().atMost(STEP).until(() -> !first.terms().isEmpty());
            second = Campaign.of(LeaderElection.create(two.locks()), name, "node-2", leading, overlaps);
            Campaign s = second;
            await().atMost(STEP).until(() -> two.faults().grantCalls() >= 1);
            cutRenewals(one);
            await().atMost(options().leaseTime().multipliedBy(3).plus(STEP)).until(() -> !s.terms().isEmpty());
            long led = System.nanoTime();
            assertThat(first.ended().get()).as("the lost term completed (not errored) before the next began")
                    .isPositive().isLessThan(led);
            assertThat(s.term().token()).isGreaterThan(first.term().token());
            assertThat(s.term().value()).isEqualTo("node-2");
            assertThat(overlaps).hasValue(0);
            StepVerifier.create(first.term().proclaim("too late")).expectError(LockLostException.class).verify(STEP);
        } finally {
            first.subscription().dispose();
            if (second != null) {
                second.subscription().dispose();
            }
        }
    }

    @Test
    void theLeaderProclaimsNewValuesThatObserversSee() {
        String name = name("election-proclaim");
        TestClient one = newClient();
        LeaderElection watcher = LeaderElection.create(newClient().locks());
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        Disposable observing = watcher.observe(name).subscribe(seen::add);
        // the observer reads the current state once its store-side subscription is live: wait for it,
        // and for each value below, so that no state is coalesced into the next one
        await().atMost(STEP).until(() -> !seen.isEmpty());
        Campaign first = Campaign.of(LeaderElection.create(one.locks()), name, "v1", new AtomicInteger(), new AtomicInteger());
        try {
            await().atMost(STEP).until(() -> !first.terms().isEmpty());
            Leadership term = first.term();
            await().atMost(STEP).until(() -> seen.contains(Optional.of(new Leader(name, "v1", term.owner(), term.token()))));
            term.proclaim("v2").block(STEP);
            assertThat(term.value()).isEqualTo("v2");
            StepVerifier.create(watcher.leader(name))
                    .expectNext(new Leader(name, "v2", term.owner(), term.token())).expectComplete().verify(STEP);
            await().atMost(STEP).untilAsserted(() -> assertThat(seen).containsSubsequence(
                    Optional.empty(),
                    Optional.of(new Leader(name, "v1", term.owner(), term.token())),
                    Optional.of(new Leader(name, "v2", term.owner(), term.token()))));
            term.resign().block(STEP);
            StepVerifier.create(term.proclaim("v3")).as("after resigning").expectError(LockLostException.class).verify(STEP);
            await().atMost(STEP).untilAsserted(() -> assertThat(seen).last().isEqualTo(Optional.empty()));
            StepVerifier.create(watcher.leader(name)).expectComplete().verify(STEP);
        } finally {
            observing.dispose();
            first.subscription().dispose();
        }
    }

    @Test
    void argumentsAreCheckedAtCallTimeNamingTheArgument() {
        LeaderElection e = LeaderElection.create(newClient().locks());
        assertThatThrownBy(() -> LeaderElection.create(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("locks");
        assertThatThrownBy(() -> e.campaign("", "v")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> e.campaign("x", null)).isInstanceOf(NullPointerException.class).hasMessageContaining("value");
        assertThatThrownBy(() -> e.campaign("x", "v".repeat(LockOptions.MAX_PAYLOAD_BYTES + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("value");
        assertThatThrownBy(() -> e.leader(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> e.observe("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
    }
}
