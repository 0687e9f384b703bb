package io.reactivelocks.internal.task;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.LockBackendException;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalTaskStore;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import io.reactivelocks.task.TaskState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/** The task-queue engine's timing, demand and loss handling, on virtual time over the in-memory store. */
class TaskQueueVirtualTimeTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private VirtualTimeScheduler vts;
    private LocalTaskStore shared;
    private LockOptions options;
    private final List<Disposable> subscriptions = new ArrayList<>();

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        shared = new LocalTaskStore(LockClock.of(vts));
        options = LockOptions.builder()
                .leaseTime(LEASE)
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofSeconds(1)).jitter(0))
                .scheduler(vts)
                .clock(LockClock.of(vts))
                .build();
    }

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        vts.dispose();
    }

    private ScriptedTaskStore store() {
        return new ScriptedTaskStore(shared, vts);
    }

    private TaskQueue queue(ScriptedTaskStore store) {
        return TaskQueue.create(store, options);
    }

    private static List<String> ids(int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add("t" + i);
        }
        return ids;
    }

    /** A subscriber that requests only what the test asks for. */
    private static final class Demand extends BaseSubscriber<TaskClaim> {
        final List<TaskClaim> received = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final AtomicBoolean completed = new AtomicBoolean();

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
        }

        @Override
        protected void hookOnNext(TaskClaim claim) {
            received.add(claim);
        }

        @Override
        protected void hookOnError(Throwable t) {
            error.set(t);
        }

        @Override
        protected void hookOnComplete() {
            completed.set(true);
        }
    }

    private Demand subscribe(TaskQueue tasks, String queue) {
        Demand d = new Demand();
        tasks.capture(queue).subscribe(d);
        subscriptions.add(d);
        return d;
    }

    private long inProgress(TaskQueue tasks, String queue, List<String> ids) {
        return ids.stream().filter(id -> tasks.status(queue, id).block().state() == TaskState.IN_PROGRESS).count();
    }

    @Test
    void captureTakesNoMoreThanTheDemand() {
        TaskQueue tasks = queue(store());
        tasks.registerAll("q", ids(10), 1).block();
        Demand d = subscribe(tasks, "q");
        vts.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(inProgress(tasks, "q", ids(10))).as("nothing without demand").isZero();
        d.request(3);
        assertThat(d.received).extracting(TaskClaim::taskId).containsExactly("t0", "t1", "t2");
        vts.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(inProgress(tasks, "q", ids(10))).isEqualTo(3);
        d.request(2);
        assertThat(d.received).hasSize(5);
        assertThat(d.received).extracting(TaskClaim::token).isSorted().doesNotHaveDuplicates();
        assertThat(inProgress(tasks, "q", ids(10))).isEqualTo(5);
        TaskClaim c = d.received.get(0);
        assertThat(c.attempt()).isEqualTo(1);
        assertThat(c.retriesLeft()).isEqualTo(1);
        assertThat(c.claimTime()).isEqualTo(LEASE);
        assertThat(c.validUntilNanos()).isEqualTo(vts.now(java.util.concurrent.TimeUnit.NANOSECONDS)
                - Duration.ofSeconds(5).toNanos() + options.validityNanos(LEASE));
    }

    @Test
    void tryCaptureCompletesWhenDrainedOrAtItsLimit() {
        TaskQueue tasks = queue(store());
        tasks.registerAll("q", ids(3), 0).block();
        assertThat(tasks.tryCapture("q", 2).collectList().block()).hasSize(2);
        assertThat(tasks.tryCapture("q", 5).collectList().block()).extracting(TaskClaim::taskId).containsExactly("t2");
        assertThat(tasks.tryCapture("q", 5).collectList().block()).isEmpty();
    }

    @Test
    void holdRenewsEveryRenewalIntervalAndEndsWhenRenewalsFailUntilTheDeadline() {
        ScriptedTaskStore store = store();
        TaskQueue tasks = queue(store);
        tasks.register("q", "t", 0).block();
        TaskClaim claim = tasks.tryCapture("q", 1).blockFirst();
        List<TaskClaim> renewed = new CopyOnWriteArrayList<>();
        AtomicBoolean ended = new AtomicBoolean();
        subscriptions.add(tasks.hold(claim).subscribe(renewed::add, e -> { }, () -> ended.set(true)));
        vts.advanceTimeBy(Duration.ofSeconds(9));
        assertThat(store.renewCalls).hasValue(0);
        vts.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(store.renewCalls).hasValue(1);
        vts.advanceTimeBy(Duration.ofSeconds(50));
        assertThat(store.renewCalls).as("every 10 s").hasValue(6);
        assertThat(renewed).hasSize(6).allMatch(c -> c.token() == claim.token());
        assertThat(renewed.get(5).validUntilNanos()).isGreaterThan(renewed.get(4).validUntilNanos());
        store.failRenewals = true;
        vts.advanceTimeBy(Duration.ofSeconds(29));
        assertThat(ended).as("transient failures are retried while the claim is valid").isFalse();
        assertThat(store.renewCalls.get()).isGreaterThan(20);
        vts.advanceTimeBy(Duration.ofSeconds(2));
        assertThat(ended).as("lost once the deadline passed").isTrue();
    }

    @Test
    void claimsHeldTogetherShareOneRenewalCallPerTick() {
        ScriptedTaskStore store = store();
        TaskQueue tasks = queue(store);
        tasks.registerAll("q", ids(5), 0).block();
        List<TaskClaim> claims = tasks.tryCapture("q", 5).collectList().block();
        List<List<TaskClaim>> renewed = new ArrayList<>();
        for (int i = 0; i < claims.size(); i++) {
            List<TaskClaim> mine = new CopyOnWriteArrayList<>();
            renewed.add(mine);
            subscriptions.add(tasks.hold(claims.get(i)).subscribe(mine::add));
            vts.advanceTimeBy(Duration.ofMillis(500)); // held one after another, within a quarter interval
        }
        vts.advanceTimeBy(Duration.ofSeconds(30).minusMillis(2500));
        assertThat(store.renewCalls).as("three rounds, one call each for the five claims").hasValue(3);
        assertThat(renewed).allSatisfy(r -> assertThat(r).hasSize(3));
        subscriptions.get(subscriptions.size() - 1).dispose(); // a cancelled hold leaves its batch
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(store.renewCalls).hasValue(4);
        assertThat(renewed.get(4)).hasSize(3);
        assertThat(renewed.get(0)).hasSize(4);
    }

    @Test
    void processCancelsTheBodyWhenTheClaimIsLostAndSignalsLockLost() {
        ScriptedTaskStore store = store();
        TaskQueue tasks = queue(store);
        tasks.register("q", "t", 2).block();
        TaskClaim claim = tasks.tryCapture("q", 1).blockFirst();
        AtomicBoolean bodyCancelled = new AtomicBoolean();
        AtomicReference<Throwable> error = new AtomicReference<>();
        subscriptions.add(tasks.process(claim, c -> Mono.never().doOnCancel(() -> bodyCancelled.set(true)))
                .subscribe(v -> { }, error::set));
        vts.advanceTimeBy(Duration.ofSeconds(100));
        assertThat(error.get()).as("renewed all along").isNull();
        assertThat(tasks.status("q", "t").block().state()).isEqualTo(TaskState.IN_PROGRESS);
        store.failRenewals = true;
        vts.advanceTimeBy(Duration.ofSeconds(40));
        assertThat(bodyCancelled).isTrue();
        assertThat(error.get()).isInstanceOf(LockLostException.class).hasMessageContaining("'t'");
        assertThat(((LockLostException) error.get()).token()).isEqualTo(claim.token());
        assertThat(((LockLostException) error.get()).lockName()).isEqualTo("q");
        assertThat(tasks.status("q", "t").block().retriesLeft()).as("a lost claim uses no retry").isEqualTo(2);
    }

    @Test
    void processCompletesOnSuccessAndFailsOnError() {
        TaskQueue tasks = queue(store());
        tasks.registerAll("q", List.of("ok", "boom"), 1).block();
        List<TaskClaim> claims = tasks.tryCapture("q", 2).collectList().block();
        AtomicReference<Object> ok = new AtomicReference<>();
        AtomicReference<Throwable> boom = new AtomicReference<>();
        tasks.process(claims.get(0), c -> Mono.delay(Duration.ofSeconds(70), vts).thenReturn("done")).subscribe(ok::set);
        tasks.process(claims.get(1), c -> Mono.error(new IllegalStateException("boom"))).subscribe(v -> { }, boom::set);
        vts.advanceTimeBy(Duration.ofSeconds(71));
        assertThat(ok.get()).isEqualTo("done");
        assertThat(boom.get()).hasMessage("boom");
        assertThat(tasks.status("q", "ok").block().state()).isEqualTo(TaskState.DONE);
        assertThat(tasks.status("q", "ok").block().attempts()).as("renewed past its claim time").isEqualTo(1);
        assertThat(tasks.status("q", "boom").block().state()).isEqualTo(TaskState.FAILED);
        assertThat(tasks.status("q", "boom").block().retriesLeft()).isZero();
    }

    @Test
    void anExpiredClaimIsRecapturedWithAGreaterTokenAndTheOldClaimCanNoLongerFinish() {
        TaskQueue first = queue(store());
        TaskQueue second = queue(store());
        first.register("q", "t", 3).block();
        TaskClaim old = first.tryCapture("q", 1).blockFirst();
        assertThat(second.tryCapture("q", 1).collectList().block()).isEmpty();
        Demand d = subscribe(second, "q");
        d.request(1);
        vts.advanceTimeBy(LEASE.minusMillis(1));
        assertThat(d.received).isEmpty();
        vts.advanceTimeBy(Duration.ofMillis(2));
        assertThat(d.received).as("woken by the store's expiry hint, no sweeper").hasSize(1);
        TaskClaim fresh = d.received.get(0);
        assertThat(fresh.token()).isGreaterThan(old.token());
        assertThat(fresh.attempt()).isEqualTo(2);
        assertThat(fresh.retriesLeft()).as("an expiry uses no retry").isEqualTo(3);
        assertThat(first.complete(old).block()).isFalse();
        assertThat(first.fail(old).block()).isFalse();
        assertThat(first.release(old).block()).isFalse();
        assertThat(first.renew(old).blockOptional()).isEmpty();
        assertThat(second.complete(fresh).block()).isTrue();
    }

    @Test
    void aWaitingCaptureIsWokenByARegistrationAtOnce() {
        ScriptedTaskStore store = store();
        TaskQueue tasks = TaskQueue.create(store, options.mutate()
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .build());
        Demand d = subscribe(tasks, "q");
        d.request(1);
        // the first call, and one more once the store's subscription is live (it may have missed a wake-up)
        assertThat(store.captureCalls).hasValue(2);
        queue(store()).register("q", "late", 0, "hello").block();
        assertThat(d.received).extracting(TaskClaim::payload).containsExactly("hello");
        assertThat(store.captureCalls).hasValue(3);
    }

    @Test
    void withoutWakeUpsAnIdleCapturePollsWithTheBackoff() {
        ScriptedTaskStore store = store();
        store.silentWakeUps = true;
        TaskQueue tasks = queue(store);
        Demand d = subscribe(tasks, "q");
        d.request(1);
        assertThat(store.captureCalls).as("the first call and the re-check once subscribed").hasValue(2);
        vts.advanceTimeBy(Duration.ofMillis(9));
        assertThat(store.captureCalls).hasValue(2);
        vts.advanceTimeBy(Duration.ofMillis(1));    // 10 ms
        assertThat(store.captureCalls).hasValue(3);
        vts.advanceTimeBy(Duration.ofMillis(20));   // + 20 ms
        assertThat(store.captureCalls).hasValue(4);
        vts.advanceTimeBy(Duration.ofMillis(40));   // + 40 ms
        assertThat(store.captureCalls).hasValue(5);
        vts.advanceTimeBy(Duration.ofSeconds(10));  // then 80, 160, 320, 640 ms, then capped at 1 s
        assertThat(store.captureCalls.get()).isBetween(5 + 4 + 8, 5 + 4 + 9);
        queue(store()).register("q", "t", 0).block();
        assertThat(d.received).as("not woken: found by the next poll").isEmpty();
        vts.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(d.received).hasSize(1);
    }

    @Test
    void transientCaptureFailuresAreRetriedAndPermanentOnesEndTheStream() {
        ScriptedTaskStore store = store();
        TaskQueue tasks = queue(store);
        tasks.register("q", "t", 0).block();
        store.failCaptures = 2;
        Demand d = subscribe(tasks, "q");
        d.request(1);
        vts.advanceTimeBy(Duration.ofMillis(30));
        assertThat(d.received).hasSize(1);
        assertThat(store.releaseOwnerCalls).as("what a lost call took is given back").hasValue(2);
        store.failCaptures = 1;
        store.permanentFailure = true;
        Demand e = subscribe(tasks, "q");
        e.request(1);
        assertThat(e.error.get()).isInstanceOf(LockBackendException.class);
        assertThat(((LockBackendException) e.error.get()).isTransient()).isFalse();
    }

    @Test
    void claimsOfACallInFlightAtCancelAreReleased() {
        ScriptedTaskStore store = store();
        store.captureDelay = Duration.ofSeconds(1);
        TaskQueue tasks = queue(store);
        tasks.registerAll("q", ids(3), 0).block();
        Demand d = subscribe(tasks, "q");
        d.request(3);
        d.cancel();
        vts.advanceTimeBy(Duration.ofSeconds(2));
        assertThat(d.received).isEmpty();
        for (String id : ids(3)) {
            assertThat(tasks.status("q", id).block().state()).isEqualTo(TaskState.PENDING);
            assertThat(tasks.status("q", id).block().attempts()).as("captured, then given back").isEqualTo(1);
        }
    }

    @Test
    void aSlowStoreFailsTheCallAtTheRequestTimeout() {
        ScriptedTaskStore store = store();
        store.captureDelay = Duration.ofSeconds(6);
        TaskQueue tasks = queue(store);
        AtomicReference<Throwable> error = new AtomicReference<>();
        tasks.tryCapture("q", 1).subscribe(c -> { }, error::set);
        vts.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(error.get()).isInstanceOf(LockBackendException.class).hasMessageContaining("request timeout");
        assertThat(((LockBackendException) error.get()).isTransient()).isTrue();
    }

    @Test
    void closeCompletesCapturesAndRefusesLaterCalls() {
        TaskQueue tasks = queue(store());
        Demand d = subscribe(tasks, "q");
        d.request(1);
        tasks.close().block();
        assertThat(d.completed).isTrue();
        assertThatThrownBy(() -> tasks.register("q", "t", 0).block()).isInstanceOf(LockClientClosedException.class);
        assertThatThrownBy(() -> tasks.capture("q").blockFirst()).isInstanceOf(LockClientClosedException.class);
    }

    @Test
    void argumentsAreCheckedAtCallTime() {
        TaskQueue tasks = queue(store());
        assertThatThrownBy(() -> tasks.register(null, "t", 0)).isInstanceOf(NullPointerException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.register("q", null, 0)).isInstanceOf(NullPointerException.class).hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.register("", "t", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.register("q", "t", -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retries");
        assertThatThrownBy(() -> tasks.register("q", "t", 0, "x".repeat(TaskQueue.MAX_PAYLOAD_BYTES + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload");
        assertThatThrownBy(() -> tasks.registerAll("q", java.util.Arrays.asList("a", null), 0)).hasMessageContaining("taskId");
        assertThatThrownBy(() -> tasks.tryCapture("q", 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
        assertThatThrownBy(() -> tasks.capture("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("queue");
        assertThatThrownBy(() -> tasks.complete(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("claim");
        assertThatThrownBy(() -> tasks.process(null, c -> Mono.empty())).hasMessageContaining("claim");
        assertThatThrownBy(() -> TaskQueue.create(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("store");
    }
}
