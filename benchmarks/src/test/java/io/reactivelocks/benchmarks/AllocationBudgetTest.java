package io.reactivelocks.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * The allocation budget of the engine's hot path (issue 14): bytes allocated per acquire + release
 * of an uncontended lock on B5's store that answers at once ({@link EngineOverheadBenchmark.StubBackend}), counted by the JVM
 * per thread — a figure a noisy machine cannot blur, unlike time, which is never asserted here.
 * The budget is the figure this test measured when it was set plus a margin for JIT differences
 * between JVMs; a change that allocates more on the hot path fails here and must either be undone
 * or raise the budget on purpose (docs/BENCHMARKS.md, B5).
 */
class AllocationBudgetTest {

    /**
     * Bytes per acquire + release: issue 14's 1 KiB target. Measured 887 here (JMH -prof gc: 843) when
     * set, so the margin is about 15 % (137 B) for JIT differences (escape analysis) between JVMs.
     */
    private static final long ACQUIRE_RELEASE_BUDGET = 1_024;
    /**
     * Bytes per withLock with an empty body: the same 1 KiB. Measured 919 here (JMH -prof gc: 890) when set, with
     * withLock as one operator (internal/WithLock; it was 1,631 through usingWhen): margin about 11 % (105 B).
     */
    private static final long WITH_LOCK_BUDGET = 1_024;

    private static final int WARM_UP = 20_000;
    private static final int MEASURED = 10_000;

    private LockClient client;

    /** Counts completions; one for the whole run, so it allocates nothing per operation. */
    private static final class Counting implements CoreSubscriber<Object> {
        int completed;

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Object o) {
        }

        @Override
        public void onError(Throwable t) {
            throw new AssertionError(t);
        }

        @Override
        public void onComplete() {
            completed++;
        }
    }

    @BeforeEach
    void setUp() {
        client = LockClient.create(new EngineOverheadBenchmark.StubBackend(), LockOptions.defaults());
    }

    @AfterEach
    void tearDown() {
        client.close().block(Duration.ofSeconds(10));
    }

    private static long bytesPerOperation(Supplier<Mono<?>> operation) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertThat(threads.isThreadAllocatedMemorySupported()).as("this JVM counts allocated bytes per thread").isTrue();
        threads.setThreadAllocatedMemoryEnabled(true);
        Counting done = new Counting();
        for (int i = 0; i < WARM_UP; i++) {
            operation.get().subscribe(done);
        }
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < MEASURED; i++) {
            operation.get().subscribe(done);
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        assertThat(done.completed).as("every operation completed synchronously on the stub").isEqualTo(WARM_UP + MEASURED);
        return allocated / MEASURED;
    }

    @Test
    void acquireAndReleaseStayWithinTheBudget() {
        long bytes = bytesPerOperation(() -> client.acquire("budget").flatMap(Lease::release));
        System.out.println("allocation per acquire + release: " + bytes + " B (budget " + ACQUIRE_RELEASE_BUDGET + " B)");
        assertThat(bytes).as("bytes allocated per acquire + release").isLessThanOrEqualTo(ACQUIRE_RELEASE_BUDGET);
    }

    @Test
    void withLockStaysWithinTheBudget() {
        Mono<Integer> body = Mono.just(1);
        long bytes = bytesPerOperation(() -> client.withLock("budget", lease -> body));
        System.out.println("allocation per withLock (empty body): " + bytes + " B (budget " + WITH_LOCK_BUDGET + " B)");
        assertThat(bytes).as("bytes allocated per withLock").isLessThanOrEqualTo(WITH_LOCK_BUDGET);
    }
}
