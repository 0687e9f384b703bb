package io.reactivelocks.vertx;

import static io.reactivelocks.vertx.VertxTestSupport.assertOn;
import static io.reactivelocks.vertx.VertxTestSupport.call;
import static io.reactivelocks.vertx.VertxTestSupport.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.reactivelocks.Concept;
import io.reactivelocks.Lease;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.election.Leader;
import io.reactivelocks.election.Leadership;
import io.reactivelocks.fencing.FencedValue;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.multi.MultiLease;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.rwlock.ReadWriteState;
import io.reactivelocks.task.TaskClaim;
import io.reactivelocks.task.TaskState;
import io.reactivelocks.task.TaskStatus;
import io.reactivelocks.window.WindowClaim;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * {@link VertxLockStore} and every concept it hands out, on the in-memory store ({@link LocalLocks#open()}):
 * who holds, tokens that increase with each grant, release when the scoped work ends, and every result on
 * the caller's event-loop context.
 */
class VertxLockStoreTest {

    private static final Duration STEP = Duration.ofSeconds(VertxTestSupport.STEP_SECONDS);

    private final Queue<Throwable> unhandled = new ConcurrentLinkedQueue<>();
    private Vertx vertx;
    private VertxLockStore store;
    private Context a;
    private Context b;
    private String name;

    @BeforeEach
    void setUp() {
        vertx = Vertx.vertx();
        vertx.exceptionHandler(unhandled::add);
        store = VertxLockStore.create(vertx, LocalLocks.open());
        a = vertx.getOrCreateContext();
        b = vertx.getOrCreateContext();
        name = "name-" + UUID.randomUUID();
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            join(store.close());
            join(vertx.close());
        } finally {
            assertThat(unhandled).as("exceptions unhandled on an event loop (BlockHound reports among them)").isEmpty();
        }
    }

    private static LockOptions options() {
        return LockOptions.builder().leaseTime(Duration.ofSeconds(5)).waitTimeout(Duration.ofSeconds(8)).build();
    }

    /** Subscribes to a stream on {@code context}, collecting its elements (each must arrive on that context). */
    private static <T> LockStream<T> open(Context context, Supplier<LockStream<T>> stream, Queue<T> into) throws Exception {
        return call(context, () -> Future.succeededFuture(stream.get().handler(element -> {
            assertOn(context);
            into.add(element);
        })));
    }

    private static <T> T first(Queue<T> queue) {
        await().atMost(STEP).until(() -> !queue.isEmpty());
        return queue.peek();
    }

    @Test
    void theSessionHandsOutEveryConceptAndSaysWhatItOffers() {
        assertThat(store.name()).isEqualTo("in-memory");
        assertThat(store.concepts()).containsExactlyInAnyOrder(Concept.values());
        assertThat(store.offers(Concept.TASK_QUEUE)).isTrue();
        assertThat(store.store().name()).isEqualTo("in-memory");
        Duration lease = options().leaseTime();
        assertThat(store.locks().options().leaseTime()).isEqualTo(LockOptions.defaults().leaseTime());
        assertThat(store.locks(options()).options().leaseTime()).isEqualTo(lease);
        assertThat(store.semaphores(options()).options().leaseTime()).isEqualTo(lease);
        assertThat(store.windowLocks(options()).options().leaseTime()).isEqualTo(lease);
        assertThat(store.taskQueue(options()).options().leaseTime()).isEqualTo(lease);
        assertThat(store.readWriteLocks(options()).options().lockOptions().leaseTime()).isEqualTo(lease);
        assertThat(store.readWriteLocks(ReadWriteLockOptions.of(options())).read().options().leaseTime()).isEqualTo(lease);
        assertThat(store.multiLocks(options()).client().options().leaseTime()).isEqualTo(lease);
    }

    @Test
    void locksOfOneSessionExcludeEachOtherWithIncreasingTokensAndReleaseOnExit() throws Exception {
        VertxLocks first = store.locks(options());
        VertxLocks second = store.fairLocks(options());
        Lease held = call(a, () -> first.acquire(name));
        assertThat(first.metrics().heldLeaseCount()).isEqualTo(1);
        assertThat(call(b, () -> second.tryAcquire(name))).as("tryAcquire while another client holds").isNull();
        assertThat(call(b, () -> second.inspect(name))).isInstanceOfSatisfying(LockState.Held.class,
                h -> assertThat(h.owner()).isEqualTo(held.owner()));
        call(a, () -> first.releaseAfterWork(held));
        assertThat(first.metrics().heldLeaseCount()).isZero();

        long inside = call(b, () -> second.withLock(name, lease -> {
            // the body runs on a duplicate of b (VertxLocks' reentrancy)
            assertThat(Vertx.currentContext().owner()).isSameAs(b.owner());
            return second.inspect(name).map(state -> ((LockState.Held) state).token());
        }));
        assertThat(inside).isGreaterThan(held.token());
        assertThat(call(a, () -> first.inspect(name))).as("released when the body's future completed").isInstanceOf(LockState.Free.class);
    }

    @Test
    void withLockManyReadsTheBodysStreamUnderTheLockAndReleasesAtItsEnd() throws Exception {
        VertxLocks locks = store.locks(options());
        Queue<String> seen = new ConcurrentLinkedQueue<>();
        Promise<Void> ended = Promise.promise();
        call(a, () -> Future.succeededFuture(locks.withLockMany(name, lease -> ContextBridge.toStream(
                        Flux.just("x", "y", "z").map(s -> s + lease.token()), a))
                .endHandler(ended::tryComplete)
                .handler(s -> {
                    assertOn(a);
                    seen.add(s);
                })));
        join(ended.future());
        assertThat(seen).hasSize(3).allSatisfy(s -> assertThat(s).matches("[xyz][0-9]+"));
        assertThat(call(a, () -> locks.inspect(name))).isInstanceOf(LockState.Free.class);
    }

    @Test
    void readWriteLockSharesReadersExcludesTheWriterAndReleasesOnExit() throws Exception {
        VertxReadWriteLock rw = store.readWriteLocks(options());
        assertThat(rw.read().mode()).isEqualTo(LockMode.READ);
        assertThat(rw.write().mode()).isEqualTo(LockMode.WRITE);
        Lease reader1 = call(a, () -> rw.read().acquire(name));
        Lease reader2 = call(b, () -> rw.read().tryAcquire(name));
        assertThat(reader2).as("a second reader while one reads").isNotNull();
        assertThat(call(b, () -> rw.write().tryAcquire(name))).as("a writer while readers read").isNull();
        Queue<ReadWriteState> states = new ConcurrentLinkedQueue<>();
        LockStream<ReadWriteState> observed = open(a, () -> rw.observe(name), states);
        assertThat(first(states).readers()).hasSize(2);
        call(a, () -> rw.release(reader1));
        call(b, () -> rw.release(reader2));

        long writerToken = call(b, () -> rw.withWriteLock(name, lease -> {
            assertOn(b);
            return Future.succeededFuture(lease.token());
        }));
        assertThat(writerToken).isGreaterThan(Math.max(reader1.token(), reader2.token()));
        Lease writer = call(a, () -> rw.write().tryAcquire(name, options()));
        assertThat(writer).as("the write lock was released when the body completed").isNotNull();
        assertThat(writer.token()).isGreaterThan(writerToken);
        assertThat(call(b, () -> rw.read().tryAcquire(name))).as("a reader while the writer writes").isNull();
        call(a, () -> rw.release(writer));

        long readToken = call(a, () -> rw.withReadLock(name, lease -> Future.succeededFuture(lease.token())));
        assertThat(readToken).isGreaterThan(writer.token());
        Queue<Lease> held = new ConcurrentLinkedQueue<>();
        LockStream<Lease> hold = open(a, () -> rw.holdWrite(name), held);
        first(held);
        assertThat(call(b, () -> rw.read().tryAcquire(name))).isNull();
        call(a, hold::cancel);
        Lease again = call(b, () -> rw.read().tryAcquire(name));
        assertThat(again).as("cancelling the hold released the write lock").isNotNull();
        call(b, () -> rw.release(again));
        Queue<Lease> readHeld = new ConcurrentLinkedQueue<>();
        LockStream<Lease> readHold = open(b, () -> rw.holdRead(name), readHeld);
        assertThat(first(readHeld).token()).isGreaterThan(again.token());
        call(b, readHold::cancel);
        call(a, observed::cancel);
        call(a, rw::close);
    }

    @Test
    void multiLockTakesEveryNameAndReleasesThemAllOnExit() throws Exception {
        VertxMultiLock multi = store.multiLocks(options());
        VertxLocks locks = multi.client();
        List<String> names = List.of(name + ":b", name + ":a");
        MultiLease both = call(a, () -> multi.acquire(names));
        assertThat(both.names()).containsExactlyInAnyOrderElementsOf(names);
        for (String n : names) {
            assertThat(call(b, () -> locks.inspect(n))).isInstanceOfSatisfying(LockState.Held.class,
                    h -> assertThat(h.token()).isEqualTo(both.token(n)));
        }
        assertThat(call(b, () -> multi.tryAcquire(names))).as("tryAcquire while held").isNull();
        assertThat(call(b, () -> locks.inspect(name + ":a"))).as("a failed tryAcquire keeps nothing").isInstanceOf(LockState.Held.class);
        call(a, () -> multi.release(both));

        long token = call(b, () -> multi.withLocks(names, lease -> {
            assertOn(b);
            return Future.succeededFuture(lease.token(name + ":a"));
        }));
        assertThat(token).isGreaterThan(both.token(name + ":a"));
        MultiLease again = call(a, () -> multi.tryAcquire(names, options()));
        assertThat(again).as("released when the body completed").isNotNull();
        call(a, () -> multi.release(again));

        Queue<MultiLease> held = new ConcurrentLinkedQueue<>();
        LockStream<MultiLease> hold = open(a, () -> multi.hold(names), held);
        assertThat(first(held).token(name + ":b")).isGreaterThan(again.token(name + ":b"));
        call(a, hold::cancel);
        for (String n : names) {
            assertThat(call(a, () -> locks.inspect(n))).as("cancel released %s", n).isInstanceOf(LockState.Free.class);
        }

        Promise<Void> ended = Promise.promise();
        Queue<Long> tokens = new ConcurrentLinkedQueue<>();
        call(a, () -> Future.succeededFuture(multi.withLocksMany(names, lease -> ContextBridge.toStream(
                        Flux.just(lease.token(name + ":a")), a))
                .endHandler(ended::tryComplete)
                .handler(tokens::add)));
        join(ended.future());
        assertThat(tokens).singleElement().satisfies(t -> assertThat(t).isGreaterThan(again.token(name + ":a")));
        assertThat(call(a, () -> locks.inspect(name + ":b"))).isInstanceOf(LockState.Free.class);
    }

    @Test
    void fencedValuesAdmitOnlyTheNewestToken() throws Exception {
        VertxFencedValues values = store.fencedValues();
        VertxLocks locks = store.locks(options());
        Lease older = call(a, () -> locks.acquire(name));
        call(a, () -> locks.release(older));
        Lease newer = call(a, () -> locks.acquire(name));
        assertThat(call(a, () -> values.write(name, newer.token(), "new"))).isTrue();
        assertThat(call(b, () -> values.write(name, older.token(), "stale"))).as("an older token").isFalse();
        assertThat(call(b, () -> values.read(name))).isEqualTo(new FencedValue("new", newer.token()));
        assertThat(call(b, () -> values.delete(name, older.token()))).isFalse();
        assertThat(call(a, () -> values.delete(name, newer.token()))).isTrue();
        assertThat(call(a, () -> values.read(name))).as("deleted").isNull();
        call(a, () -> locks.release(newer));
        call(a, values::close);
    }

    @Test
    void theAdminListsOnTheCallersContextAndForceReleases() throws Exception {
        VertxLocks locks = store.locks(options());
        Lease held = call(a, () -> locks.acquire(name));
        VertxAdmin admin = store.admin();
        Queue<io.reactivelocks.admin.HeldGrant> listed = new ConcurrentLinkedQueue<>();
        open(b, () -> admin.list(name), listed);
        assertThat(first(listed).token()).isEqualTo(held.token());
        assertThat(call(b, () -> admin.forceRelease(name))).extracting(io.reactivelocks.admin.HeldGrant::owner)
                .containsExactly(held.owner());
        Lease next = call(a, () -> locks.tryAcquire(name));
        assertThat(next.token()).isGreaterThan(held.token());
        call(a, () -> locks.release(next));
    }

    @Test
    void taskQueueCapturesProcessesFailsAndReleases() throws Exception {
        VertxTaskQueue tasks = store.taskQueue(options());
        assertThat(call(a, () -> tasks.register(name, "t1", 1, "payload-1"))).isTrue();
        assertThat(call(a, () -> tasks.register(name, "t1", 1))).as("already known").isFalse();
        assertThat(call(a, () -> tasks.registerAll(name, List.of("t2", "t3"), 0))).isEqualTo(2);

        Queue<TaskClaim> claims = new ConcurrentLinkedQueue<>();
        LockStream<TaskClaim> capture = open(a, () -> tasks.capture(name), claims);
        await().atMost(STEP).until(() -> claims.size() == 3);
        call(a, capture::cancel);
        TaskClaim t1 = claims.stream().filter(c -> c.taskId().equals("t1")).findFirst().orElseThrow();
        assertThat(t1.payload()).isEqualTo("payload-1");
        assertThat(call(b, () -> tasks.status(name, "t1")).state()).isEqualTo(TaskState.IN_PROGRESS);

        String result = call(b, () -> tasks.process(t1, c -> {
            assertOn(b);
            return Future.succeededFuture("sent " + c.token());
        }));
        assertThat(result).isEqualTo("sent " + t1.token());
        assertThat(call(b, () -> tasks.status(name, "t1")).state()).isEqualTo(TaskState.DONE);
        assertThat(call(b, () -> tasks.complete(t1))).as("no longer held").isFalse();

        TaskClaim t2 = claims.stream().filter(c -> c.taskId().equals("t2")).findFirst().orElseThrow();
        TaskClaim renewed = call(a, () -> tasks.renew(t2));
        assertThat(renewed).isNotNull();
        assertThat(renewed.token()).isEqualTo(t2.token());
        Queue<TaskClaim> renewals = new ConcurrentLinkedQueue<>();
        LockStream<TaskClaim> hold = open(a, () -> tasks.hold(t2), renewals);
        call(a, hold::cancel);
        assertThat(call(a, () -> tasks.release(t2))).isTrue();
        TaskStatus released = call(a, () -> tasks.status(name, "t2"));
        assertThat(released.state()).isEqualTo(TaskState.PENDING);

        TaskClaim t3 = claims.stream().filter(c -> c.taskId().equals("t3")).findFirst().orElseThrow();
        assertThat(call(a, () -> tasks.fail(t3))).isTrue();
        assertThat(call(a, () -> tasks.status(name, "t3")).state()).as("no retry left").isEqualTo(TaskState.DEAD);

        Queue<TaskClaim> again = new ConcurrentLinkedQueue<>();
        Promise<Void> ended = Promise.promise();
        call(b, () -> Future.succeededFuture(tasks.tryCapture(name, 5).endHandler(ended::tryComplete).handler(again::add)));
        join(ended.future());
        assertThat(again).singleElement().satisfies(c -> {
            assertThat(c.taskId()).isEqualTo("t2");
            assertThat(c.token()).as("a recapture's token").isGreaterThan(t2.token());
        });
        assertThat(call(b, () -> tasks.remove(name, "t2"))).isTrue();
        assertThat(call(b, () -> tasks.status(name, "t2"))).isNull();
        call(a, tasks::close);
    }

    @Test
    void aCancelledCaptureGivesBackTheClaimsItDidNotDeliver() throws Exception {
        VertxTaskQueue tasks = store.taskQueue(options());
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add("t" + i);
        }
        call(a, () -> tasks.registerAll(name, ids, 0));
        Queue<TaskClaim> delivered = new ConcurrentLinkedQueue<>();
        Promise<LockStream<TaskClaim>> opened = Promise.promise();
        call(a, () -> {
            LockStream<TaskClaim> capture = tasks.capture(name);
            opened.complete(capture);
            // the first delivery cancels: whatever else was captured is never delivered
            return Future.succeededFuture(capture.handler(claim -> {
                delivered.add(claim);
                capture.cancel();
            }));
        });
        first(delivered);
        String kept = delivered.peek().taskId();
        await().atMost(STEP).untilAsserted(() -> {
            for (String id : ids) {
                TaskState state = call(b, () -> tasks.status(name, id)).state();
                assertThat(state).as(id).isEqualTo(id.equals(kept) ? TaskState.IN_PROGRESS : TaskState.PENDING);
            }
        });
        assertThat(delivered).hasSize(1);
        assertThat(join(opened.future()).isDone()).isTrue();
    }

    @Test
    void semaphoreWindowLockAndElectionsOfTheSession() throws Exception {
        VertxSemaphore semaphore = store.semaphores(options());
        Lease permit = call(a, () -> semaphore.acquire(name, 1));
        assertThat(call(b, () -> semaphore.tryAcquire(name, 1))).isNull();
        call(a, () -> semaphore.release(permit));
        long token = call(b, () -> semaphore.withPermit(name, 1, p -> Future.succeededFuture(p.token())));
        assertThat(token).isGreaterThan(permit.token());

        VertxWindowLock window = store.windowLocks(options());
        WindowClaim claim = call(a, () -> window.tryClaim(name, Duration.ofHours(1)));
        assertThat(claim).isNotNull();
        assertThat(call(b, () -> window.tryClaim(name, Duration.ofHours(1)))).isNull();

        VertxLeaderElection elections = store.elections(options());
        Queue<Leadership> terms = new ConcurrentLinkedQueue<>();
        LockStream<Leadership> campaign = open(a, () -> elections.campaign(name, "node-1"), terms);
        Leadership term = first(terms);
        Leader leader = call(b, () -> elections.leader(name));
        assertThat(leader.value()).isEqualTo("node-1");
        assertThat(leader.token()).isEqualTo(term.token());
        Future<Void> lost = call(a, () -> Future.succeededFuture(elections.lost(term)));
        call(a, campaign::cancel);
        assertThat(lost.isComplete()).as("a resigned term is not lost").isFalse();
        assertThat(call(b, () -> elections.leader(name))).isNull();
    }

    @Test
    void closingTheSessionClosesWhatItHandedOut() throws Exception {
        VertxLocks locks = store.locks(options());
        call(a, () -> locks.acquire(name));
        call(a, store::close);
        assertThat(locks.metrics().heldLeaseCount()).as("held leases released by the close").isZero();
        assertThatThrownBy(() -> store.locks()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aBoundSessionHandsOutBoundViews() throws Exception {
        VertxLockStore bound = store.on(a);
        Lease lease = join(bound.locks(options()).acquire(name).andThen(ar -> assertOn(a)));
        join(bound.fencedValues().write(name, lease.token(), "v").andThen(ar -> assertOn(a)));
        join(bound.locks(options()).release(lease));
    }
}
