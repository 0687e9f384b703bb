package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/** The engine's timing logic, driven by virtual time against a scripted backend. */
class EngineVirtualTimeTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private ScriptedBackend backend;
    private LockOptions options;
    private LockClient client;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        backend = new ScriptedBackend();
        options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(30))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofSeconds(1)).jitter(0))
                .scheduler(vts)
                .clock(LockClock.of(vts))
                .build();
        client = LockClient.create(backend, options);
    }

    @AfterEach
    void tearDown() {
        client.close().block(VERIFY);
        vts.dispose();
    }

    private Holder holder(Duration remaining) {
        return new Holder("someone-else", 1, remaining);
    }

    @Test
    void renewsEveryThirdOfTheLeaseAndKeepsTheToken() {
        StepVerifier.withVirtualTime(() -> client.hold("a"), () -> vts, Long.MAX_VALUE)
                .assertNext(l -> assertThat(l.validUntilNanos()).isEqualTo(Duration.ofMillis(29_698).toNanos()))
                .expectNoEvent(Duration.ofMillis(9_999))
                .then(() -> assertThat(backend.renewals).isEmpty())
                .thenAwait(Duration.ofMillis(1))
                .assertNext(l -> assertThat(l.validUntilNanos()).isEqualTo(Duration.ofMillis(39_698).toNanos()))
                .then(() -> assertThat(backend.renewals).hasSize(1))
                .thenAwait(Duration.ofSeconds(10))
                .expectNextCount(1)
                .thenAwait(Duration.ofSeconds(100))
                .expectNextCount(10)
                .then(() -> assertThat(backend.renewals).hasSize(12))
                .thenCancel()
                .verify(VERIFY);
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
    }

    @Test
    void theHoldStreamCompletesAtTheLocalDeadlineWhenRenewalsKeepFailing() {
        backend.onRenew = b -> Mono.error(new LockBackendException(null, "store down", null, true));
        // validity = 30 s − 1% − 2 ms = 29.698 s from the send time of the grant request
        StepVerifier.withVirtualTime(() -> client.hold("a"), () -> vts, Long.MAX_VALUE)
                .expectNextCount(1)
                .expectNoEvent(Duration.ofMillis(29_697))
                .thenAwait(Duration.ofMillis(1))
                .expectComplete()
                .verify(VERIFY);
        // renewal was retried quickly (every min(1 s, interval/8)) while time remained: 10 s, 11 s, ... 29 s
        assertThat(backend.renewals).hasSize(20);
        // and the lost lease is released on the server (owner-checked) without delaying completion
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
    }

    @Test
    void aLeaseTheStoreNoLongerRecognisesIsLostAtOnce() {
        backend.onRenew = b -> Mono.just(b.stream().map(r -> io.reactivelocks.spi.RenewOutcome.notHeld()).toList());
        AtomicInteger lostSignals = new AtomicInteger();
        StepVerifier.withVirtualTime(() -> client.hold("a").doOnNext(l -> l.lost().subscribe(null, null, lostSignals::incrementAndGet)),
                        () -> vts, Long.MAX_VALUE)
                .expectNextCount(1)
                .thenAwait(Duration.ofSeconds(10))
                .expectComplete()
                .verify(VERIFY);
        assertThat(lostSignals).hasValue(1);
    }

    @Test
    void waitTimeoutEndsTheAcquireWithLockTimeoutExceptionAfterBackoffSteps() {
        backend.onGrant = r -> Mono.just(Attempt.busy(holder(Duration.ofSeconds(60))));
        LockOptions fiveSeconds = options.mutate().waitTimeout(Duration.ofSeconds(5)).build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", fiveSeconds), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(4_999))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(LockTimeoutException.class);
                    assertThat(((LockTimeoutException) e).waitTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(((LockTimeoutException) e).lockName()).isEqualTo("a");
                })
                .verify(VERIFY);
        // attempts at 0, 10, 30, 70, 150, 310, 630, 1270 ms, then every second (cap): 2270, 3270, 4270
        assertThat(backend.grants).hasSize(11);
        assertThat(backend.releasedOwners).as("nothing to clean up: every answer was busy").isEmpty();
    }

    @Test
    void aFastFailureWaitsTheBackoffStepButNoLongerThanTheRequestTimeout() {
        // e.g. ZooKeeper: the connection dropped under the first attempt (a transient error, not a timeout)
        backend.onGrant = r -> backend.grants.size() == 1
                ? Mono.error(new LockBackendException(r.name(), "connection lost", null, true))
                : Mono.just(Attempt.granted(7, r.leaseTime()));
        LockOptions slow = options.mutate()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .requestTimeout(Duration.ofSeconds(3))
                .build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", slow), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(2_999))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(l -> assertThat(l.token()).isEqualTo(7))
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.grants).hasSize(2);
    }

    @Test
    void aFastFailureWaitsTheShorterBackoffStep() {
        backend.onGrant = r -> backend.grants.size() == 1
                ? Mono.error(new LockBackendException(r.name(), "connection refused", null, true))
                : Mono.just(Attempt.granted(7, r.leaseTime()));
        // the setUp backoff: 10 ms for the first retry, no jitter
        StepVerifier.withVirtualTime(() -> client.acquire("a"), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(9))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(l -> assertThat(l.token()).isEqualTo(7))
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void aWaiterRetriesWhenTheHoldersTtlRunsOutEvenWithAHugeBackoff() {
        AtomicInteger calls = new AtomicInteger();
        backend.onGrant = r -> calls.incrementAndGet() == 1
                ? Mono.just(Attempt.busy(holder(Duration.ofSeconds(5))))
                : Mono.just(Attempt.granted(7, r.leaseTime()));
        LockOptions slow = options.mutate()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", slow), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(5_000))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(l -> assertThat(l.token()).isEqualTo(7))
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void aReleaseNotificationWakesTheWaiterAndTheSubscriptionGoingLiveTriggersOneRecheck() {
        Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();
        backend.events = events.asFlux();
        AtomicInteger calls = new AtomicInteger();
        backend.onGrant = r -> calls.incrementAndGet() <= 2
                ? Mono.just(Attempt.busy(holder(Duration.ofSeconds(60))))
                : Mono.just(Attempt.granted(9, r.leaseTime()));
        LockOptions slow = options.mutate()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", slow), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> assertThat(calls).hasValue(1))
                .then(() -> events.tryEmitNext(new LockEvent.Subscribed("a")))
                .then(() -> assertThat(calls).as("re-check once the subscription is live").hasValue(2))
                .then(() -> events.tryEmitNext(new LockEvent.Acquired("a", "x", 3)))
                .then(() -> assertThat(calls).as("an acquisition does not wake waiters").hasValue(2))
                .then(() -> events.tryEmitNext(new LockEvent.Released("a", "someone-else", false)))
                .assertNext(l -> assertThat(l.token()).isEqualTo(9))
                .then(() -> assertThat(events.currentSubscriberCount()).as("the name's subscription lingers").isEqualTo(1))
                .thenAwait(NotificationHub.LINGER)
                .then(() -> assertThat(events.currentSubscriberCount()).as("the waiter unsubscribed").isZero())
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void aWaiterJoiningALingeringSubscriptionSubscribesNoMoreAndDoesNotPoll() {
        Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();
        AtomicInteger subscriptions = new AtomicInteger();
        backend.events = events.asFlux().doOnSubscribe(x -> subscriptions.incrementAndGet());
        AtomicInteger calls = new AtomicInteger();
        // first acquire: busy, busy (re-check once live), granted; second: busy, granted after a release
        backend.onGrant = r -> switch (calls.incrementAndGet()) {
            case 1, 2, 4 -> Mono.just(Attempt.busy(holder(Duration.ofSeconds(60))));
            default -> Mono.just(Attempt.granted(calls.get(), r.leaseTime()));
        };
        StepVerifier.withVirtualTime(() -> client.acquire("a").flatMap(Lease::release).then(client.acquire("a")),
                        () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> events.tryEmitNext(new LockEvent.Subscribed("a")))
                .then(() -> assertThat(calls).hasValue(2))
                .then(() -> events.tryEmitNext(new LockEvent.Released("a", "someone-else", false)))
                .then(() -> assertThat(calls).as("granted, released, the second acquire busy: no re-check, as the"
                        + " subscription was live when it asked and notified no release since").hasValue(4))
                .then(() -> assertThat(subscriptions).as("the second waiter joined the lingering subscription").hasValue(1))
                .expectNoEvent(Duration.ofSeconds(9))
                .then(() -> assertThat(calls).as("live: no poll before the safety net (lease / 3 = 10 s)").hasValue(4))
                .then(() -> events.tryEmitNext(new LockEvent.Released("a", "someone-else", false)))
                .assertNext(l -> assertThat(l.token()).isEqualTo(5))
                .expectComplete()
                .verify(VERIFY);
        assertThat(subscriptions).hasValue(1);
    }

    @Test
    void aBoundedNumberOfAttemptsIsSpentOnTheBackoffScheduleEvenWhenNotificationsAreLive() {
        Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();
        backend.events = events.asFlux();
        AtomicInteger calls = new AtomicInteger();
        backend.onGrant = r -> {
            calls.incrementAndGet();
            return Mono.just(Attempt.busy(holder(Duration.ofSeconds(60))));
        };
        LockOptions threeTries = options.mutate()
                .backoff(Retry.backoff(3, Duration.ofMillis(5)).maxBackoff(Duration.ofMillis(5)).jitter(0))
                .build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", threeTries), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> events.tryEmitNext(new LockEvent.Subscribed("a")))
                .then(() -> assertThat(calls).as("busy, then the re-check once live").hasValue(2))
                .thenAwait(Duration.ofMillis(5))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockTimeoutException.class)
                        .hasMessageContaining("3 attempts"))
                .verify(VERIFY);
        assertThat(calls).hasValue(3);
    }

    @Test
    void oneReleaseWakesOneLocalWaiterNotAll() {
        Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();
        backend.events = events.asFlux();
        java.util.concurrent.atomic.AtomicBoolean free = new java.util.concurrent.atomic.AtomicBoolean();
        backend.onGrant = r -> free.compareAndSet(true, false)
                ? Mono.just(Attempt.granted(backend.grants.size(), r.leaseTime()))
                : Mono.just(Attempt.busy(holder(Duration.ofSeconds(60))));
        LockOptions slow = options.mutate()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build();
        int waiters = 20;
        List<Lease> granted = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < waiters; i++) {
            client.acquire("a", slow).subscribe(granted::add);
        }
        events.tryEmitNext(new LockEvent.Subscribed("a"));
        int before = backend.grants.size();
        assertThat(before).as("one attempt each, and one re-check each when the channel went live").isEqualTo(2 * waiters);

        for (int handoff = 1; handoff <= waiters; handoff++) {
            free.set(true);
            events.tryEmitNext(new LockEvent.Released("a", "someone-else", false));
            assertThat(granted).as("handoff %d", handoff).hasSize(handoff);
            assertThat(backend.grants.size() - before).as("store calls after %d releases", handoff).isEqualTo(handoff);
        }
    }

    /** The store grants, but the first {@code late} answers come 31 s after their request: past the 30 s lease. */
    private void grantsLate(int late) {
        backend.onGrant = r -> {
            Mono<Attempt> granted = Mono.just(Attempt.granted(backend.grants.size(), r.leaseTime()));
            return backend.grants.size() <= late ? Mono.delay(Duration.ofSeconds(31), vts).then(granted) : granted;
        };
    }

    @Test
    void aGrantAnsweredAfterItsValidityIsGivenBackAndAskedAgainWhileTheWaitLasts() {
        grantsLate(1);
        LockOptions patient = options.mutate().requestTimeout(Duration.ofMinutes(1)).waitTimeout(Duration.ofMinutes(2)).build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", patient), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(31))
                .assertNext(l -> assertThat(l.token()).as("the second grant's").isEqualTo(2))
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.grants).hasSize(2);
        // the late grant was released (owner-checked) before the second request was sent
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
        assertThat(client.metrics().heldLeaseCount()).isOne();
    }

    @Test
    void lateGrantsEndTheAcquireOnlyWhenTheWaitBudgetIsSpentWithTheTimeoutAskedFor() {
        grantsLate(Integer.MAX_VALUE);
        LockOptions budget = options.mutate().requestTimeout(Duration.ofMinutes(1)).waitTimeout(Duration.ofSeconds(40)).build();
        java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
        client.acquire("a", budget).subscribe(null, error::set);
        vts.advanceTimeBy(Duration.ofMillis(39_999));
        assertThat(error.get()).isNull();
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(error.get()).isInstanceOf(LockTimeoutException.class);
        vts.advanceTimeBy(Duration.ofSeconds(31)); // the second request, in flight at the timeout, settles
        assertThat(backend.grants).hasSize(2);
        assertThat(backend.releasedOwners).as("both late grants given back").hasSize(2);
        assertThat(client.metrics().pendingAcquireCount()).isZero();
    }

    @Test
    void aTryAcquireWhoseGrantCameBackLateAsksOnceMore() {
        grantsLate(1);
        LockOptions slowStore = options.mutate().requestTimeout(Duration.ofMinutes(1)).build();
        StepVerifier.withVirtualTime(() -> client.tryAcquire("a", slowStore), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(31))
                .assertNext(l -> assertThat(l.token()).isEqualTo(2))
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
    }

    @Test
    void aTryAcquireWhoseGrantsCameBackLateTwiceAnswersAsForABusyLock() {
        grantsLate(Integer.MAX_VALUE);
        LockOptions slowStore = options.mutate().requestTimeout(Duration.ofMinutes(1)).build();
        StepVerifier.withVirtualTime(() -> client.tryAcquire("a", slowStore), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(62))
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.grants).hasSize(2);
        assertThat(backend.releasedOwners).hasSize(2);
        assertThat(client.metrics().pendingAcquireCount()).isZero();
    }

    @Test
    void aQueuedTurnGrantedAfterItsValidityIsGivenBackAndTheAcquireQueuesAgain() {
        // a natively queueing store (etcd, ZooKeeper, the fair locks): the turn comes after the lease time
        backend.onGrant = r -> Mono.just(new Attempt.Queued(backend.grants.size() == 1
                ? Mono.delay(Duration.ofSeconds(31), vts).thenReturn(Attempt.granted(1, r.leaseTime()))
                : Mono.just(Attempt.granted(2, r.leaseTime()))));
        LockOptions patient = options.mutate().waitTimeout(Duration.ofMinutes(2)).build();
        StepVerifier.withVirtualTime(() -> client.acquire("a", patient), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(31))
                .assertNext(l -> assertThat(l.token()).isEqualTo(2))
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
    }

    @Test
    void aGrantThatArrivesAfterCancelIsReleased() {
        Sinks.One<Attempt> answer = Sinks.one();
        backend.onGrant = r -> answer.asMono();
        Disposable d = client.acquire("a").subscribe();
        assertThat(backend.grants).hasSize(1);
        d.dispose();
        assertThat(backend.releasedOwners).as("nothing released while the request is in flight").isEmpty();
        answer.tryEmitValue(Attempt.granted(1, Duration.ofSeconds(30)));
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
        assertThat(client.metrics().heldLeaseCount()).isZero();
        assertThat(client.metrics().pendingAcquireCount()).isZero();
    }

    @Test
    void anErrorAfterCancelIsAlsoCleanedUpBecauseTheOutcomeIsUnknown() {
        Sinks.One<Attempt> answer = Sinks.one();
        backend.onGrant = r -> answer.asMono();
        Disposable d = client.tryAcquire("a").subscribe();
        d.dispose();
        answer.tryEmitError(new java.io.IOException("connection reset"));
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
    }

    @Test
    void aQueueTurnThatFailsWhileBeingSubscribedIsRetriedNotLeftHanging() {
        // e.g. etcd: the session lease ended between the enqueue and the turn's subscription
        backend.onGrant = r -> backend.grants.size() == 1
                ? Mono.just(new Attempt.Queued(Mono.error(new LockBackendException(r.name(), "session ended", null, true))))
                : Mono.just(Attempt.granted(7, r.leaseTime()));
        StepVerifier.withVirtualTime(() -> client.acquire("a"), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(1))
                .assertNext(l -> assertThat(l.token()).isEqualTo(7))
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.grants).hasSize(2);
    }

    @Test
    void aRequestThatNeverAnswersFailsWithATransientBackendErrorAfterTheRequestTimeout() {
        backend.onGrant = r -> Mono.never();
        LockOptions quick = options.mutate().requestTimeout(Duration.ofSeconds(2)).build();
        StepVerifier.withVirtualTime(() -> client.tryAcquire("a", quick), () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(1_999))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockBackendException.class)
                        .satisfies(x -> assertThat(((LockBackendException) x).isTransient()).isTrue()))
                .verify(VERIFY);
        assertThat(backend.releasedOwners).as("unknown outcome: released").hasSize(1);
    }

    @Test
    void leasesDueInTheSameTickAreRenewedInOneCall() {
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            leases.add(client.tryAcquire("n" + i).block(VERIFY));
        }
        vts.advanceTimeBy(Duration.ofSeconds(1));
        for (int i = 50; i < 100; i++) {
            leases.add(client.tryAcquire("n" + i).block(VERIFY));
        }
        vts.advanceTimeBy(Duration.ofSeconds(9)); // t = 10 s: the first 50 are due; the others join early
        assertThat(backend.renewals).hasSize(1);
        assertThat(backend.renewals.get(0)).hasSize(100);
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(backend.renewals).hasSize(2);
        assertThat(backend.renewals.get(1)).extracting(RenewRequest::lock).hasSize(100);
        Flux.fromIterable(leases).flatMap(Lease::release).blockLast(VERIFY);
        vts.advanceTimeBy(Duration.ofSeconds(30));
        assertThat(backend.renewals).as("no renewal outlives a release").hasSize(2);
    }

    @Test
    void cancellingAWaiterLeavesNothingScheduled() {
        backend.onGrant = r -> Mono.just(Attempt.busy(holder(Duration.ofSeconds(60))));
        Disposable d = client.acquire("a").subscribe();
        vts.advanceTimeBy(Duration.ofMillis(100));
        int attempts = backend.grants.size();
        d.dispose();
        vts.advanceTimeBy(Duration.ofMinutes(5));
        assertThat(backend.grants).hasSize(attempts);
        assertThat(client.metrics().pendingAcquireCount()).isZero();
    }

    @Test
    void closeAfterCancelWaitsForTheRequestInFlightAndReleasesItsLateGrantBeforeClosingTheStore() {
        Sinks.One<Attempt> answer = Sinks.one();
        backend.onGrant = r -> answer.asMono();
        client.acquire("a").subscribe().dispose();
        AtomicInteger closed = new AtomicInteger();
        client.close().subscribe(null, e -> closed.set(-1), closed::incrementAndGet);
        assertThat(closed).as("close waits for the request of the cancelled acquire").hasValue(0);
        assertThat(backend.closed).isFalse();
        answer.tryEmitValue(Attempt.granted(1, Duration.ofSeconds(30)));
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
        assertThat(backend.releasedAfterClose).as("released before the store was closed").isEmpty();
        assertThat(closed).hasValue(1);
        assertThat(backend.closed).isTrue();
    }

    @Test
    void aCancelledReleaseStillReleasesOnTheStoreAndCloseWaitsForIt() {
        Lease held = client.tryAcquire("a").block(VERIFY);
        assertThat(held).isNotNull();
        Sinks.One<Boolean> answer = Sinks.one();
        AtomicInteger storeCancels = new AtomicInteger();
        backend.onRelease = owner -> answer.asMono().doOnCancel(storeCancels::incrementAndGet);
        held.release().subscribe().dispose(); // the caller stops listening at once
        assertThat(backend.releasedOwners).as("the release was sent").containsExactly(held.owner());
        assertThat(storeCancels).as("the store's release was not cancelled with its caller").hasValue(0);
        AtomicInteger closed = new AtomicInteger();
        client.close().subscribe(null, e -> closed.set(-1), closed::incrementAndGet);
        assertThat(closed).as("close waits for the release its caller gave up on").hasValue(0);
        answer.tryEmitValue(true);
        assertThat(closed).hasValue(1);
        assertThat(backend.releasedAfterClose).isEmpty();
    }

    @Test
    void closeAfterCancelIsBoundedByTheRequestTimeoutWhenTheRequestNeverAnswers() {
        backend.onGrant = r -> Mono.never();
        LockOptions quick = options.mutate().requestTimeout(Duration.ofSeconds(2)).build();
        LockClient c = LockClient.create(backend, quick);
        c.tryAcquire("a").subscribe().dispose();
        AtomicInteger closed = new AtomicInteger();
        c.close().subscribe(null, e -> closed.set(-1), closed::incrementAndGet);
        vts.advanceTimeBy(Duration.ofMillis(1_999));
        assertThat(closed).hasValue(0);
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(backend.releasedOwners).as("unknown outcome: released").hasSize(1);
        assertThat(backend.releasedAfterClose).isEmpty();
        assertThat(closed).hasValue(1);
    }

    @Test
    void closeGivesUpOnAReleaseThatNeverAnswersAfterTwiceTheRequestTimeout() {
        LockOptions quick = options.mutate().requestTimeout(Duration.ofSeconds(2)).build();
        LockClient c = LockClient.create(backend, quick);
        Lease held = c.tryAcquire("a").block(VERIFY);
        assertThat(held).isNotNull();
        backend.onRelease = owner -> Mono.never();
        AtomicInteger closed = new AtomicInteger();
        c.close().subscribe(null, e -> closed.set(-1), closed::incrementAndGet);
        vts.advanceTimeBy(Duration.ofMillis(1_999));
        assertThat(closed).as("the release is still within its request timeout").hasValue(0);
        vts.advanceTimeBy(Duration.ofSeconds(3));
        assertThat(closed).hasValue(1);
        assertThat(backend.closed).isTrue();
    }

    @Test
    void aBodyThatCompletedKeepsItsResultWhenTheReleaseIsNotConfirmed() {
        backend.onRelease = owner -> Mono.error(new java.io.IOException("connection reset"));
        List<String> unconfirmed = new java.util.concurrent.CopyOnWriteArrayList<>();
        LockClient reported = LockClient.create(backend, options, new io.reactivelocks.LockListener() {
            @Override
            public void onReleaseUnconfirmed(String name, long token, Throwable error) {
                unconfirmed.add(name + " " + error.getClass().getSimpleName());
            }
        });
        try {
            StepVerifier.create(reported.withLock("a", lease -> Mono.just(1))).expectNext(1).expectComplete().verify(VERIFY);
            StepVerifier.create(reported.withLockMany("b", lease -> Flux.just(1, 2))).expectNext(1, 2).expectComplete().verify(VERIFY);
            // a body that failed keeps its own error, the release's suppressed in it
            StepVerifier.create(reported.withLock("c", lease -> Mono.error(new IllegalStateException("body"))))
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class).hasMessage("body")
                            .satisfies(x -> assertThat(x.getSuppressed()).hasSize(1)))
                    .verify(VERIFY);
            assertThat(unconfirmed).containsExactly("a LockBackendException", "b LockBackendException", "c LockBackendException");
            assertThat(reported.metrics().unconfirmedReleaseCount()).isEqualTo(3);
            assertThat(reported.metrics().heldLeaseCount()).as("renewal stopped: nothing held").isZero();
        } finally {
            reported.close().block(VERIFY);
        }
    }
    @Test
    void aHoldWhoseGrantIsLostBeforeItsStreamIsSubscribedAsksAgainInsteadOfEndingEmpty() {
        // the thread that delivers the grant is descheduled past the lease's deadline between the store's
        // answer (still valid) and the hold stream's subscription: the listener's call in between moves the clock
        java.util.concurrent.atomic.AtomicLong offset = new java.util.concurrent.atomic.AtomicLong();
        LockClock jumping = () -> vts.now(java.util.concurrent.TimeUnit.NANOSECONDS) + offset.get();
        AtomicInteger acquired = new AtomicInteger();
        LockOptions patient = options.mutate().clock(jumping).waitTimeout(Duration.ofMinutes(2)).build();
        LockClient jumpy = LockClient.create(backend, patient, new io.reactivelocks.LockListener() {
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                if (acquired.incrementAndGet() == 1) {
                    offset.addAndGet(Duration.ofSeconds(31).toNanos());
                }
            }
        });
        try {
            StepVerifier.withVirtualTime(() -> jumpy.hold("a", patient).take(1), () -> vts, Long.MAX_VALUE)
                    .assertNext(l -> assertThat(l.token()).as("the second grant's, not an empty stream").isEqualTo(2))
                    .expectComplete()
                    .verify(VERIFY);
            assertThat(backend.grants).hasSize(2);
            assertThat(backend.releasedOwners).as("the lost grant cleaned up").contains(backend.grants.get(0).owner());
        } finally {
            jumpy.close().block(VERIFY);
        }
    }

    @Test
    void aHoldWhoseGrantsAreAllLostBeforeDeliveryEndsWithTheTimeoutAskedFor() {
        java.util.concurrent.atomic.AtomicLong offset = new java.util.concurrent.atomic.AtomicLong();
        LockClock jumping = () -> vts.now(java.util.concurrent.TimeUnit.NANOSECONDS) + offset.get();
        LockOptions budget = options.mutate().clock(jumping).waitTimeout(Duration.ofSeconds(40)).build();
        LockClient jumpy = LockClient.create(backend, budget, new io.reactivelocks.LockListener() {
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                offset.addAndGet(Duration.ofSeconds(31).toNanos());
            }
        });
        try {
            StepVerifier.withVirtualTime(() -> jumpy.hold("a", budget), () -> vts, Long.MAX_VALUE)
                    .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(LockTimeoutException.class)
                            .hasMessageContaining("PT40S"))
                    .verify(VERIFY);
            assertThat(backend.grants).as("asked again once: the second loss spent the wait").hasSize(2);
        } finally {
            jumpy.close().block(VERIFY);
        }
    }
}
