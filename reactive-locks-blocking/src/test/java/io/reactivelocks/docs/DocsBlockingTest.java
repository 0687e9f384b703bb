package io.reactivelocks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.blocking.BlockingLease;
import io.reactivelocks.blocking.BlockingLocks;
import io.reactivelocks.blocking.BlockingFencedValues;
import io.reactivelocks.blocking.BlockingLeaderElection;
import io.reactivelocks.blocking.BlockingMultiLock;
import io.reactivelocks.blocking.BlockingReadWriteLock;
import io.reactivelocks.blocking.BlockingSemaphore;
import io.reactivelocks.blocking.BlockingStore;
import io.reactivelocks.blocking.BlockingTaskQueue;
import io.reactivelocks.blocking.BlockingWindowLock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.election.Leader;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.window.WindowClaim;
import java.util.List;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalSemaphoreStore;
import io.reactivelocks.semaphore.Semaphore;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The samples of docs/blocking.md (and the README's blocking quick start), run on the in-memory stores. */
class DocsBlockingTest {

    static final Duration STEP = Duration.ofSeconds(10);

    private final BlockingLocks locks = BlockingLocks.of(LocalLockBackend.client());

    private final AtomicInteger counter = new AtomicInteger();

    @AfterEach
    void close() {
        locks.client().close().block(STEP);
    }

    @Test
    void quickStart() throws Exception {
        // tag::quick-start[]
        BlockingLocks orders = BlockingLocks.of(LocalLockBackend.client());   // any LockClient: store.locks(), ...
        String receipt = orders.withLock("order:42", lease -> charge("order:42", lease.token()));   // released when the body ends
        // end::quick-start[]
        assertThat(receipt).startsWith("charged order:42 with fence ");
        orders.client().close().block(STEP);
    }

    @Test
    void withLockAndTryWithResources() throws Exception {
        String receipt = locks.withLock("order:42", lease -> charge("order:42", lease.token()));
        // tag::with-lock[]
        try (BlockingLease lease = locks.acquire("order:42")) {    // waits; an interrupt cancels the wait
            charge("order:42", lease.token());
        }                                                          // released here

        Optional<BlockingLease> maybe = locks.tryAcquire("report");   // empty when someone else holds it
        // end::with-lock[]
        assertThat(receipt).startsWith("charged order:42 with fence ");
        assertThat(maybe).isPresent();
        maybe.get().close();
    }

    @Test
    void onVirtualThreads() throws Exception {
        // tag::virtual-threads[]
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 500; i++) {
                threads.submit(() -> locks.withLock("counter", lease -> counter.incrementAndGet()));   // parked, not pinned
            }
        }                                                          // close() waits for every task
        // end::virtual-threads[]
        assertThat(counter.get()).isEqualTo(500);
    }

    @Test
    void semaphore() throws Exception {
        // tag::semaphore[]
        BlockingSemaphore exports = BlockingSemaphore.of(Semaphore.create(new LocalSemaphoreStore()));   // store.semaphores(options), ...
        String exported = exports.withPermit("exports", 4, permit -> runExport(permit.token()));   // waits while 4 are out
        // end::semaphore[]
        assertThat(exported).startsWith("export with fence ");
        exports.semaphore().close().block(STEP);
    }

    @Test
    void everyConcept() throws Exception {
        // tag::store[]
        try (BlockingStore store = BlockingStore.of(LocalLocks.open())) {   // RedisLocks.connect(redis), PostgresLocks.connect(db), ...
            BlockingLocks locks = store.locks();
            BlockingSemaphore permits = store.semaphores(LockOptions.defaults());
            BlockingReadWriteLock catalog = store.readWriteLocks(LockOptions.defaults());
            BlockingMultiLock accounts = store.multiLocks(LockOptions.defaults());
            BlockingWindowLock hourly = store.windowLocks(LockOptions.defaults());
            BlockingLeaderElection elections = store.elections(LockOptions.defaults());
            BlockingFencedValues values = store.fencedValues();
            BlockingTaskQueue tasks = store.taskQueue(LockOptions.defaults());
            // end::store[]
            concepts(locks, catalog, accounts, hourly, elections, values, tasks);
            assertThat(permits.options()).isEqualTo(LockOptions.defaults());
            // tag::store-close[]
        }                                                            // closes every concept, then the connections
        // end::store-close[]
    }

    private void concepts(BlockingLocks locks, BlockingReadWriteLock catalog, BlockingMultiLock accounts,
                          BlockingWindowLock hourly, BlockingLeaderElection elections, BlockingFencedValues values,
                          BlockingTaskQueue tasks) throws Exception {
        // tag::lock-state[]
        LockState state = locks.inspect("order:42");                 // Held (owner, token, payload) or Free
        locks.hold("maintenance", lease -> {                         // called at the grant, then after each renewal
            runMaintenanceStep(lease.token());
            return moreSteps();                                      // false: released, and hold returns
        });
        locks.awaitRelease("order:42");                              // returns once the lock is free
        // end::lock-state[]
        assertThat(state).isInstanceOf(LockState.Free.class);

        // tag::read-write[]
        String read = catalog.withReadLock("catalog", lease -> "read under " + lease.token());     // many readers at once
        long written = catalog.withWriteLock("catalog", lease -> rewrite(lease.token()));          // one writer, alone
        // end::read-write[]
        assertThat(read).startsWith("read under ");
        assertThat(written).isPositive();

        // tag::multi-lock[]
        String moved = accounts.withLocks(List.of("account:7", "account:3"),   // all or nothing, in one canonical order
                set -> transfer(set.token("account:7"), set.token("account:3")));
        // end::multi-lock[]
        assertThat(moved).startsWith("moved ");

        // tag::window-lock[]
        Optional<WindowClaim> claim = hourly.tryClaim("report", Duration.ofHours(1));   // empty: someone ran it this hour
        claim.ifPresent(c -> sendReport(c.window(), c.token()));
        // end::window-lock[]
        assertThat(claim).isPresent();

        // tag::election[]
        String led = elections.campaign("scheduler", "node-1", term -> {   // waits to lead; resigns when the body ends
            term.proclaim("node-1:8080");                                  // what observers see as the leader's value
            return "led with fence " + term.token();                       // a lost term interrupts the body
        });
        Optional<Leader> now = elections.leader("scheduler");              // empty: nobody leads now
        // end::election[]
        assertThat(led).startsWith("led with fence ");
        assertThat(now).isEmpty();

        // tag::fenced-values[]
        boolean accepted = locks.withLock("config", lease -> values.write("config", lease.token(), "{\"v\":2}"));
        // false: a newer holder's token is on the key already
        // end::fenced-values[]
        assertThat(accepted).isTrue();

        // tag::task-queue[]
        tasks.register("emails", "welcome:42", 3, "ann@example.com");
        tasks.capture("emails", task -> {                            // one claim at a time, on this thread
            tasks.process(task, c -> send(c.payload(), c.token()));  // completed on return, failed on throw
            return tasks.status("emails", "welcome:43").isPresent(); // false: stop capturing
        });
        // end::task-queue[]
        assertThat(tasks.status("emails", "welcome:42")).get().extracting(s -> s.state().name()).isEqualTo("DONE");
    }

    private int steps;

    private void runMaintenanceStep(long token) {
        steps++;
    }

    private boolean moreSteps() {
        return steps < 1;
    }

    static long rewrite(long token) {
        return token;
    }

    static String transfer(long fromToken, long toToken) {
        return "moved with fences " + fromToken + ", " + toToken;
    }

    static void sendReport(long window, long token) {
    }

    static String send(String to, long token) {
        return "sent to " + to;
    }

    static String charge(String order, long token) {
        return "charged " + order + " with fence " + token;
    }

    static String runExport(long token) {
        return "export with fence " + token;
    }
}
