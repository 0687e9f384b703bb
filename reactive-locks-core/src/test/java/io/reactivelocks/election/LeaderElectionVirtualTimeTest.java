package io.reactivelocks.election;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.GrantRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Leader election and lock payloads on the in-memory store, on virtual time. */
class LeaderElectionVirtualTimeTest {

    private static final Duration LEASE = Duration.ofSeconds(3);
    private static final Duration STEP = Duration.ofSeconds(5);

    private VirtualTimeScheduler vts;
    private LocalLockStore store;
    private LockClient locks;
    private LockClient others;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        store = new LocalLockStore(vts, LockClock.of(vts));
        LockOptions options = LockOptions.builder().leaseTime(LEASE).scheduler(vts).clock(LockClock.of(vts)).build();
        locks = LocalLockBackend.client(store, options);
        others = LocalLockBackend.client(store, options);
    }

    @AfterEach
    void tearDown() {
        locks.close().block(STEP);
        others.close().block(STEP);
        vts.dispose();
    }

    @Test
    void aCampaignEmitsOnElectionThenOnEachRenewalAndCompletesOnResign() {
        LeaderElection elections = LeaderElection.create(locks);
        List<Leadership> terms = new CopyOnWriteArrayList<>();
        StepVerifier.create(elections.campaign("e", "node-1").doOnNext(terms::add))
                .assertNext(t -> {
                    assertThat(t.name()).isEqualTo("e");
                    assertThat(t.value()).isEqualTo("node-1");
                    assertThat(t.isValid()).isTrue();
                })
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(1)))
                .assertNext(t -> assertThat(t.token()).isEqualTo(terms.get(0).token()))
                .then(() -> terms.get(0).resign().block(STEP))
                .expectComplete()
                .verify(STEP);
        assertThat(store.heldCount()).isZero();
    }

    @Test
    void aCandidateLeadsWhenTheCrashedLeadersGrantExpiresAndObserversSeeNoneLeaderNone() {
        // a leader that crashed: its grant is on the store with a payload, nobody renews it
        Attempt crashed = new LocalLockBackend(store).tryGrant(new GrantRequest("e", "crashed", LEASE, false,
                LockClock.of(vts), "old")).block(STEP);
        long crashedToken = ((Attempt.Granted) crashed).token();
        LeaderElection elections = LeaderElection.create(locks);
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        Disposable observing = LeaderElection.create(others).observe("e").subscribe(seen::add);
        List<Leadership> terms = new CopyOnWriteArrayList<>();
        Disposable campaign = elections.campaign("e", "new").subscribe(terms::add);
        try {
            assertThat(seen).containsExactly(Optional.of(new Leader("e", "old", "crashed", crashedToken)));
            assertThat(terms).isEmpty();
            vts.advanceTimeBy(LEASE);
            assertThat(terms).hasSize(1);
            Leadership term = terms.get(0);
            assertThat(term.token()).isGreaterThan(crashedToken);
            assertThat(seen).last().isEqualTo(Optional.of(new Leader("e", "new", term.owner(), term.token())));
            term.proclaim("newer").block(STEP);
            assertThat(seen).last().isEqualTo(Optional.of(new Leader("e", "newer", term.owner(), term.token())));
            StepVerifier.create(elections.leader("e"))
                    .expectNext(new Leader("e", "newer", term.owner(), term.token())).expectComplete().verify(STEP);
            campaign.dispose(); // resigns
            vts.advanceTime();
            assertThat(seen).last().isEqualTo(Optional.empty());
            StepVerifier.create(term.proclaim("late")).expectError(LockLostException.class).verify(STEP);
        } finally {
            observing.dispose();
            campaign.dispose();
        }
    }

    @Test
    void payloadIsStoredWithTheGrantAndALostLeaseCannotUpdateIt() {
        Lease lease = locks.acquire("p", locks.options().withPayload("mine")).block(STEP);
        assertThat(lease.payload()).isEqualTo("mine");
        StepVerifier.create(others.inspect("p"))
                .assertNext(s -> assertThat(((LockState.Held) s).payload()).isEqualTo("mine"))
                .expectComplete().verify(STEP);
        // the store loses the grant (another owner takes over after it was released behind our back)
        new LocalLockBackend(store).release("p", lease.owner()).block(STEP);
        Lease taken = others.acquire("p").block(STEP);
        StepVerifier.create(lease.updatePayload("stale")).expectError(LockLostException.class).verify(STEP);
        assertThat(lease.isValid()).as("a refused update ends the lease").isFalse();
        StepVerifier.create(others.inspect("p"))
                .assertNext(s -> assertThat(s).isEqualTo(new LockState.Held("p", taken.owner(), taken.token(),
                        ((LockState.Held) s).validUntilNanos(), null)))
                .expectComplete().verify(STEP);
        taken.release().block(STEP);
    }

    @Test
    void argumentsAreCheckedAtCallTime() {
        LeaderElection elections = LeaderElection.create(locks);
        assertThatThrownBy(() -> LeaderElection.create(locks, null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("options");
        assertThatThrownBy(() -> elections.campaign("e", "\uDC00")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value");
        assertThatThrownBy(() -> LockOptions.builder().payload("x".repeat(LockOptions.MAX_PAYLOAD_BYTES + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        assertThat(LockOptions.builder().payload("é".repeat(LockOptions.MAX_PAYLOAD_BYTES / 2)).build().payload())
                .hasSize(LockOptions.MAX_PAYLOAD_BYTES / 2);
        assertThat(LockOptions.defaults().payload()).isNull();
        assertThat(LockOptions.defaults().withPayload("v").mutate().build().payload()).isEqualTo("v");
    }
}
