package io.reactivelocks.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.reactivelocks.Concept;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.election.Leader;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteState;
import io.reactivelocks.semaphore.SemaphoreState;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.window.WindowClaim;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every concept of the blocking facade, through {@link BlockingStore} over the in-memory store
 * ({@link LocalLocks#open()}): who holds, tokens increasing, release on exit, interruption as
 * cancellation. Waits across threads are bounded ({@link #WAIT}); nothing sleeps.
 */
class BlockingConceptsTest {

    private static final long WAIT = 20;
    private static final LockOptions OPTIONS = LockOptions.defaults();
    /** Short leases, for the streams that emit after each renewal. */
    private static final LockOptions SHORT = LockOptions.builder().leaseTime(Duration.ofSeconds(3))
            .renewalInterval(Duration.ofMillis(200)).build();

    private final BlockingStore store = BlockingStore.of(LocalLocks.open());
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void close() {
        threads.shutdownNow();
        store.close();
    }

    @Test
    void theStoreHandsOutEveryConceptInItsBlockingForm() {
        assertThat(store.name()).isNotBlank();
        assertThat(store.concepts()).isEqualTo(EnumSet.allOf(Concept.class));
        assertThat(store.offers(Concept.TASK_QUEUE)).isTrue();
        assertThat(store.locks().client()).isNotNull();
        assertThat(store.locks(OPTIONS).options()).isEqualTo(OPTIONS);
        assertThat(store.fairLocks(OPTIONS)).isNotNull();
        assertThat(store.semaphores(OPTIONS).options()).isEqualTo(OPTIONS);
        assertThat(store.readWriteLocks(OPTIONS).read().mode()).isEqualTo(LockMode.READ);
        assertThat(store.multiLocks(OPTIONS).client()).isNotNull();
        assertThat(store.windowLocks(OPTIONS).options()).isNotNull();
        assertThat(store.elections(OPTIONS).elections()).isNotNull();
        assertThat(store.fencedValues().fencedValues()).isNotNull();
        assertThat(store.taskQueue(OPTIONS).options()).isNotNull();
        store.close();
        store.close();   // idempotent
        assertThatThrownBy(store::locks).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void lockHoldInspectObserveAwaitRelease() throws Exception {
        BlockingLocks locks = store.locks();
        List<Long> tokens = new ArrayList<>();
        locks.hold("h", lease -> {
            tokens.add(lease.token());
            LockState state = locks.inspect("h");
            assertThat(state).isInstanceOf(LockState.Held.class);
            assertThat(((LockState.Held) state).token()).isEqualTo(lease.token());
            return false;                                   // stop: released before hold returns
        });
        assertThat(locks.inspect("h")).isInstanceOf(LockState.Free.class);
        try (BlockingLease next = locks.acquire("h")) {
            assertThat(next.token()).isGreaterThan(tokens.get(0));
            assertThat(locks.metrics().heldLeaseCount()).isEqualTo(1);
            assertThat(next.validUntilNanos()).isNotZero();
        }

        BlockingLease held = locks.acquire("o");
        CountDownLatch sawHeld = new CountDownLatch(1);
        Future<List<String>> observed = threads.submit(() -> {
            List<String> seen = new ArrayList<>();
            locks.observe("o", s -> {
                seen.add(s.getClass().getSimpleName());
                if (s instanceof LockState.Held) {
                    sawHeld.countDown();
                }
                return s instanceof LockState.Held;          // until it is free
            });
            return seen;
        });
        Future<?> awaited = threads.submit(() -> {
            locks.awaitRelease("o");
            return null;
        });
        assertThat(sawHeld.await(WAIT, TimeUnit.SECONDS)).isTrue();
        held.release();
        assertThat(observed.get(WAIT, TimeUnit.SECONDS)).containsExactly("Held", "Free");
        awaited.get(WAIT, TimeUnit.SECONDS);
    }

    @Test
    void semaphoreCountsHoldAndObserve() throws Exception {
        BlockingSemaphore permits = store.semaphores(OPTIONS);
        List<BlockingLease> two = permits.acquire("s", 3, 2, OPTIONS);
        assertThat(two).hasSize(2);
        assertThat(two.get(1).token()).isGreaterThan(two.get(0).token());
        assertThat(permits.tryAcquire("s", 3, 2, OPTIONS)).isEmpty();
        List<Integer> holders = new ArrayList<>();
        permits.hold("s", 3, lease -> {
            permits.observe("s", (SemaphoreState state) -> {
                holders.add(state.holders().size());
                return false;
            });
            return false;
        });
        assertThat(holders).containsExactly(3);
        two.forEach(BlockingLease::close);
        Optional<List<BlockingLease>> all = permits.tryAcquire("s", 3, 3, OPTIONS);
        assertThat(all).isPresent();                        // the held permit was released on exit
        all.get().forEach(BlockingLease::release);
    }

    @Test
    void readWriteLockReadersTogetherWriterAlone() throws Exception {
        BlockingReadWriteLock rw = store.readWriteLocks(OPTIONS);
        BlockingLease r1 = rw.read().acquire("c");
        BlockingLease r2 = rw.read().tryAcquire("c").orElseThrow();
        assertThat(rw.write().tryAcquire("c")).isEmpty();
        List<Integer> readers = new ArrayList<>();
        rw.observe("c", (ReadWriteState s) -> {
            readers.add(s.readers().size());
            return false;
        });
        assertThat(readers).containsExactly(2);
        r1.close();
        r2.close();
        long writeToken = rw.withWriteLock("c", lease -> {
            assertThatThrownBy(() -> rw.withReadLock("c", inner -> 0)).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> rw.write().acquire("c")).isInstanceOf(IllegalStateException.class);
            return lease.token();
        });
        assertThat(writeToken).isGreaterThan(Math.max(r1.token(), r2.token()));
        rw.holdWrite("c", lease -> false);
        rw.holdRead("c", lease -> false);
        assertThat(rw.write().tryAcquire("c", rw.write().options()).map(l -> {
            l.release();
            return l.token();
        })).get().matches(t -> t > writeToken);
    }

    @Test
    void multiLockAllOrNothingAndReleasedOnExit() throws Exception {
        BlockingMultiLock multi = store.multiLocks(OPTIONS);
        BlockingLocks locks = multi.client();
        long token = multi.withLocks(List.of("b", "a"), set -> {
            assertThat(set.names()).containsExactly("a", "b");
            assertThat(locks.inspect("a")).isInstanceOf(LockState.Held.class);
            long reused = locks.withLock("b", lease -> lease.token());   // reentrant on this thread
            assertThat(reused).isEqualTo(set.token("b"));
            assertThat(set.lease("a").token()).isEqualTo(set.token("a"));
            return set.token("a");
        });
        assertThat(locks.inspect("a")).isInstanceOf(LockState.Free.class);
        assertThat(locks.inspect("b")).isInstanceOf(LockState.Free.class);

        try (BlockingLease other = locks.acquire("b")) {
            assertThat(multi.tryAcquire(List.of("a", "b"))).isEmpty();
            assertThat(locks.inspect("a")).isInstanceOf(LockState.Free.class);   // nothing half held
            assertThatThrownBy(() -> locks.withLock("c", l -> multi.withLocks(List.of("c", "d"), s -> 0)))
                    .isInstanceOf(IllegalStateException.class);
            Future<?> waiting = threads.submit(() -> multi.withLocks(List.of("a", "b"), s -> 1));
            assertThat(waiting.isDone()).isFalse();
            waiting.cancel(true);                                            // interrupt: cancel
            assertThatThrownBy(() -> waiting.get(WAIT, TimeUnit.SECONDS)).isInstanceOf(java.util.concurrent.CancellationException.class);
        }
        locks.awaitRelease("a");                                             // the interrupted one left nothing held
        try (BlockingMultiLease set = multi.acquire(List.of("a", "b"))) {
            assertThat(set.token("a")).isGreaterThan(token);
            assertThat(set.isValid()).isTrue();
        }
        multi.hold(List.of("a", "b"), set -> false);
        assertThat(locks.inspect("a")).isInstanceOf(LockState.Free.class);
    }

    @Test
    void refusesReactorNonBlockingThreads() {
        BlockingFencedValues values = store.fencedValues();
        BlockingTaskQueue tasks = store.taskQueue(OPTIONS);
        BlockingMultiLock multi = store.multiLocks(OPTIONS);
        Throwable refused = reactor.core.publisher.Mono.fromCallable(() -> {
            List<Throwable> errors = new ArrayList<>();
            for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
                    () -> values.read("k"), () -> tasks.tryCapture("q", 1), () -> multi.withLocks(List.of("a"), s -> 0),
                    () -> store.locks().hold("a", l -> false))) {
                try {
                    call.execute();
                } catch (Throwable e) {
                    errors.add(e);
                }
            }
            assertThat(errors).hasSize(4).allMatch(e -> e instanceof IllegalStateException
                    && e.getMessage().contains("Reactor non-blocking thread"));
            return null;
        }).subscribeOn(reactor.core.scheduler.Schedulers.parallel()).then().materialize()
                .map(signal -> signal.getThrowable() == null ? new Throwable("none") : signal.getThrowable())
                .toFuture().join();
        assertThat(refused).hasMessage("none");
        assertThat(store.locks().client()).isNotNull();
    }

    @Test
    void windowLockOnceAWindow() throws Exception {
        BlockingWindowLock hourly = store.windowLocks(OPTIONS);
        Optional<WindowClaim> first = hourly.tryClaim("report", Duration.ofHours(1));
        assertThat(first).isPresent();
        assertThat(hourly.tryClaim("report", Duration.ofHours(1))).isEmpty();
    }

    @Test
    void electionLeadsWhileTheBodyRuns() throws Exception {
        BlockingLeaderElection elections = store.elections(OPTIONS);
        CompletableFuture<List<Optional<Leader>>> observed = new CompletableFuture<>();
        CountDownLatch observing = new CountDownLatch(1);
        threads.submit(() -> {
            List<Optional<Leader>> seen = new ArrayList<>();
            elections.observe("sched", leader -> {
                seen.add(leader);
                observing.countDown();
                return seen.size() < 2 || leader.isPresent();   // until nobody leads after someone did
            });
            observed.complete(seen);
            return null;
        });
        assertThat(observing.await(WAIT, TimeUnit.SECONDS)).isTrue();
        long token = elections.campaign("sched", "node-1", term -> {
            assertThat(elections.leader("sched")).get().extracting(Leader::value).isEqualTo("node-1");
            term.proclaim("node-1b");
            assertThat(term.value()).isEqualTo("node-1b");
            return term.token();
        });
        assertThat(elections.leader("sched")).isEmpty();    // resigned on exit
        List<Optional<Leader>> seen = observed.get(WAIT, TimeUnit.SECONDS);
        assertThat(seen.get(0)).isEmpty();
        assertThat(seen.get(seen.size() - 1)).isEmpty();
        assertThat(seen).anyMatch(l -> l.isPresent() && l.get().token() == token);
        long next = elections.campaign("sched", "node-2", BlockingLeadership::token);
        assertThat(next).isGreaterThan(token);
    }

    @Test
    void fencedValuesRefuseOlderTokens() throws Exception {
        BlockingFencedValues values = store.fencedValues();
        assertThat(values.write("k", 5, "v5")).isTrue();
        assertThat(values.write("k", 3, "v3")).isFalse();
        assertThat(values.read("k")).contains(new FencedValue("v5", 5));
        assertThat(values.delete("k", 4)).isFalse();
        assertThat(values.delete("k", 6)).isTrue();
        assertThat(values.read("k")).isEmpty();
    }

    @Test
    void taskQueueRegisterCaptureProcess() throws Exception {
        BlockingTaskQueue tasks = store.taskQueue(SHORT);
        assertThat(tasks.register("q", "t1", 1, "p1")).isTrue();
        assertThat(tasks.register("q", "t1", 1)).isFalse();
        assertThat(tasks.registerAll("q", List.of("t2", "t3"), 0)).isEqualTo(2);

        List<String> done = new ArrayList<>();
        tasks.capture("q", claim -> {
            String r = tasks.process(claim, c -> c.taskId() + ":" + c.payload());
            done.add(r);
            return done.size() < 1;
        });
        assertThat(done).containsExactly("t1:p1");
        assertThat(tasks.status("q", "t1")).get().extracting(s -> s.state()).isEqualTo(TaskState.DONE);

        List<TaskClaim> claims = tasks.tryCapture("q", 5);
        assertThat(claims).extracting(TaskClaim::taskId).containsExactlyInAnyOrder("t2", "t3");
        TaskClaim t2 = claims.stream().filter(c -> c.taskId().equals("t2")).findFirst().orElseThrow();
        TaskClaim t3 = claims.stream().filter(c -> c.taskId().equals("t3")).findFirst().orElseThrow();
        assertThatThrownBy(() -> tasks.process(t2, c -> {
            throw new java.io.IOException("boom");
        })).isInstanceOf(java.io.IOException.class).hasMessage("boom");
        assertThat(tasks.status("q", "t2")).get().extracting(s -> s.state()).isEqualTo(TaskState.DEAD);

        assertThat(tasks.renew(t3)).isPresent();
        tasks.hold(t3, renewed -> false);
        assertThat(tasks.release(t3)).isTrue();
        TaskClaim again = tasks.tryCapture("q", 1).get(0);
        assertThat(again.token()).isGreaterThan(t3.token());
        assertThat(tasks.complete(t3)).isFalse();           // the old claim cannot end it
        assertThat(tasks.fail(again)).isTrue();
        assertThat(tasks.remove("q", "t3")).isTrue();
        assertThat(tasks.status("q", "t3")).isEmpty();
    }

    @Test
    void adminListsAndForceReleasesWhatAnotherClientHolds() throws Exception {
        BlockingLocks holder = store.locks(OPTIONS);
        BlockingLease lease = holder.acquire("admin:a");
        BlockingAdmin admin = store.admin();
        assertThat(admin.list("admin:")).singleElement().satisfies(g -> {
            assertThat(g.name()).isEqualTo("admin:a");
            assertThat(g.token()).isEqualTo(lease.token());
        });
        assertThat(admin.list("other:")).isEmpty();
        assertThat(admin.forceRelease("admin:a")).extracting(io.reactivelocks.admin.HeldGrant::token).containsExactly(lease.token());
        assertThat(admin.list("admin:")).isEmpty();
        BlockingLease next = store.locks(OPTIONS).tryAcquire("admin:a").orElseThrow();
        assertThat(next.token()).isGreaterThan(lease.token());
        next.release();
    }
}
