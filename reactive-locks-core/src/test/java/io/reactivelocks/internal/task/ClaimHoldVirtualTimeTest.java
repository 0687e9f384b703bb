package io.reactivelocks.internal.task;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClock;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalTaskStore;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/**
 * Held claims on the engine's renewal machinery ({@code RenewalScheduler}, as lock leases): batched per queue and
 * claim time, split at the store's batch size, converging onto one tick per interval, a lost claim ending its hold
 * only, and no timer left after the queue closed. On virtual time over the in-memory store.
 */
class ClaimHoldVirtualTimeTest {

    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration VERIFY = Duration.ofSeconds(5);

    private VirtualTimeScheduler vts;
    private TimerCountingScheduler timers;
    private ScriptedTaskStore store;
    private final AtomicInteger renewedEvents = new AtomicInteger();
    private TaskQueue tasks;
    private final List<Disposable> subscriptions = new ArrayList<>();

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        timers = new TimerCountingScheduler(vts);
        store = new ScriptedTaskStore(new LocalTaskStore(LockClock.of(vts)), vts);
        tasks = TaskQueue.create(store, LockOptions.builder()
                .leaseTime(LEASE)
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(10)).maxBackoff(Duration.ofSeconds(1)).jitter(0))
                .scheduler(timers)
                .clock(LockClock.of(vts))
                .listener(new LockListener() {
                    @Override
                    public void onRenewed(String name, long token) {
                        renewedEvents.incrementAndGet();
                    }
                })
                .build());
    }

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        vts.dispose();
    }

    private List<TaskClaim> capture(int n) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add("t" + i);
        }
        tasks.registerAll("q", ids, 0).block(VERIFY);
        List<TaskClaim> claims = tasks.tryCapture("q", n).collectList().block(VERIFY);
        assertThat(claims).hasSize(n);
        return claims;
    }

    /** Holds a claim; its renewed claims go to the list returned, its end to {@code ended}. */
    private List<TaskClaim> hold(TaskClaim claim, AtomicBoolean ended) {
        List<TaskClaim> renewed = new CopyOnWriteArrayList<>();
        subscriptions.add(tasks.hold(claim).subscribe(renewed::add, e -> { }, () -> ended.set(true)));
        return renewed;
    }

    @Test
    void claimsCapturedTogetherRenewInOneCallPerTickSplitAtTheStoresBatchSize() {
        store.maxBatch = 2;
        List<TaskClaim> claims = capture(5);
        List<List<TaskClaim>> renewed = new ArrayList<>();
        for (TaskClaim c : claims) {
            renewed.add(hold(c, new AtomicBoolean()));
        }
        vts.advanceTimeBy(Duration.ofSeconds(10).minusMillis(1));
        assertThat(store.renewCalls).hasValue(0);
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(store.renewBatches).as("one batch of five, in calls of at most two").containsExactly(2, 2, 1);
        vts.advanceTimeBy(Duration.ofSeconds(20));
        assertThat(store.renewBatches).containsExactly(2, 2, 1, 2, 2, 1, 2, 2, 1);
        assertThat(renewed).allSatisfy(r -> {
            assertThat(r).hasSize(3);
            assertThat(r.get(2).validUntilNanos()).isGreaterThan(r.get(1).validUntilNanos());
        });
        assertThat(renewedEvents).as("a listener event per renewal").hasValue(15);
    }

    @Test
    void claimsHeldOverALongerSpanThanTheSlackConvergeOntoOneTick() {
        List<TaskClaim> claims = capture(3);
        List<List<TaskClaim>> renewed = new ArrayList<>();
        for (TaskClaim c : claims) {
            renewed.add(hold(c, new AtomicBoolean()));
            vts.advanceTimeBy(Duration.ofSeconds(4)); // more than a quarter interval apart: three batches
        }
        // t = 12 s: the batch due at 10 s took along those due at 14 s and 18 s
        assertThat(store.renewBatches).containsExactly(3);
        vts.advanceTimeBy(Duration.ofSeconds(18));
        assertThat(store.renewBatches).as("from then on one call per tick").containsExactly(3, 3, 3);
        assertThat(renewed).allSatisfy(r -> assertThat(r).hasSize(3));
    }

    @Test
    void aLostClaimEndsItsHoldAndLeavesTheBatchToTheOthers() {
        List<TaskClaim> claims = capture(3);
        AtomicBoolean lostEnded = new AtomicBoolean();
        AtomicBoolean otherEnded = new AtomicBoolean();
        hold(claims.get(0), lostEnded);
        List<TaskClaim> other = hold(claims.get(1), otherEnded);
        List<TaskClaim> cancelled = hold(claims.get(2), new AtomicBoolean());
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(store.renewBatches).containsExactly(3);
        assertThat(tasks.remove("q", claims.get(0).taskId()).block(VERIFY)).isTrue();
        subscriptions.get(2).dispose(); // a cancelled hold leaves its batch
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(store.renewBatches).as("the cancelled claim left the batch").containsExactly(3, 2);
        assertThat(lostEnded).as("the store said it is not held: its hold completed").isTrue();
        assertThat(otherEnded).isFalse();
        assertThat(other).hasSize(2);
        assertThat(cancelled).hasSize(1);
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(store.renewBatches).as("the lost claim is not renewed again").containsExactly(3, 2, 1);
        assertThat(other).hasSize(3);
    }

    @Test
    void transientFailuresAreRetriedInBatchesUntilTheDeadlineEndsTheHold() {
        List<TaskClaim> claims = capture(2);
        AtomicBoolean first = new AtomicBoolean();
        AtomicBoolean second = new AtomicBoolean();
        hold(claims.get(0), first);
        hold(claims.get(1), second);
        store.failRenewals = true;
        long deadline = claims.get(0).validUntilNanos();
        vts.advanceTimeBy(Duration.ofNanos(deadline - vts.now(TimeUnit.NANOSECONDS) - 1));
        assertThat(first).as("retried while the claim is valid").isFalse();
        assertThat(store.renewBatches).as("both claims in every retry").hasSizeGreaterThan(10).containsOnly(2);
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(first).as("the local deadline ends the hold").isTrue();
        assertThat(second).isTrue();
        int calls = store.renewCalls.get();
        vts.advanceTimeBy(Duration.ofMinutes(1));
        assertThat(store.renewCalls).as("nothing renewed after the end").hasValue(calls);
        assertThat(timers.live()).as("no timer left for the ended holds").isZero();
    }

    @Test
    void closeEndsTheHoldsAndLeavesNoTimer() {
        List<TaskClaim> claims = capture(2);
        AtomicBoolean ended = new AtomicBoolean();
        hold(claims.get(0), ended);
        StepVerifier.create(tasks.hold(claims.get(1)))
                .expectSubscription()
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(10)))
                .assertNext(c -> assertThat(c.token()).isEqualTo(claims.get(1).token()))
                .then(() -> assertThat(timers.live()).as("a renewal batch and a deadline are pending").isPositive())
                .then(() -> tasks.close().block(VERIFY))
                .expectComplete()
                .verify(VERIFY);
        assertThat(ended).isTrue();
        assertThat(timers.live()).as("timers pending after close").isZero();
        int calls = store.renewCalls.get();
        vts.advanceTimeBy(Duration.ofMinutes(1));
        assertThat(store.renewCalls).hasValue(calls);
        StepVerifier.create(tasks.hold(claims.get(0))).as("a hold after close ends at once").expectComplete().verify(VERIFY);
    }

    /** The virtual-time scheduler, counting the timers scheduled on it that neither ran nor were disposed. */
    private static final class TimerCountingScheduler implements Scheduler {
        private final Scheduler delegate;
        private final Set<Object> pending = ConcurrentHashMap.newKeySet();

        TimerCountingScheduler(Scheduler delegate) {
            this.delegate = delegate;
        }

        int live() {
            return pending.size();
        }

        @Override
        public Disposable schedule(Runnable task) {
            return delegate.schedule(task);
        }

        @Override
        public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
            Object timer = new Object();
            pending.add(timer);
            Disposable d = delegate.schedule(() -> {
                pending.remove(timer);
                task.run();
            }, delay, unit);
            return () -> {
                pending.remove(timer);
                d.dispose();
            };
        }

        @Override
        public long now(TimeUnit unit) {
            return delegate.now(unit);
        }

        @Override
        public Worker createWorker() {
            return delegate.createWorker();
        }

        @Override
        public void dispose() {
            delegate.dispose();
        }
    }
}
