package io.reactivelocks.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

class MutualExclusionCheckerTest {

    @Test
    void sequentialHoldsAreFineAndRecorded() {
        AtomicLong clock = new AtomicLong();
        MutualExclusionChecker c = new MutualExclusionChecker(clock::get);
        MutualExclusionChecker.Hold a = c.begin("n", "A", 1);
        clock.set(10);
        a.end();
        a.end(); // idempotent
        clock.set(20);
        try (MutualExclusionChecker.Hold b = c.begin("n", "B", 2)) {
            assertThat(b.name()).isEqualTo("n");
            assertThat(b.owner()).isEqualTo("B");
            assertThat(b.token()).isEqualTo(2);
            clock.set(30);
        }
        c.assertNoOverlap();
        c.assertTokensStrictlyIncreasing("n");
        assertThat(c.intervals("n")).containsExactly(
                new MutualExclusionChecker.Interval("n", "A", 1, 0, 0, 10),
                new MutualExclusionChecker.Interval("n", "B", 2, 1, 20, 30));
        assertThat(c.intervals("never")).isEmpty();
        assertThat(c.names()).containsExactly("n");
    }

    @Test
    void twoOwnersInsideTheSameNameAreReported() {
        MutualExclusionChecker c = new MutualExclusionChecker();
        MutualExclusionChecker.Hold a = c.begin("n", "A", 1);
        MutualExclusionChecker.Hold b = c.begin("n", "B", 2);
        MutualExclusionChecker.Hold other = c.begin("other", "C", 1);
        b.end();
        a.end();
        other.end();
        assertThat(c.overlaps()).singleElement().satisfies(o -> {
            assertThat(o.first().owner()).isEqualTo("A");
            assertThat(o.second().owner()).isEqualTo("B");
        });
        assertThatThrownBy(c::assertNoOverlap).isInstanceOf(AssertionError.class)
                .hasMessageContaining("1 mutual-exclusion violation")
                .hasMessageContaining("A (token 1) still held it when B (token 2) began");
        assertThat(c.intervals("n").get(0).open()).isFalse();
    }

    @Test
    void reentryBySameOwnerIsNoOverlapAndSameLeaseMayRepeatItsToken() {
        MutualExclusionChecker c = new MutualExclusionChecker();
        MutualExclusionChecker.Hold outer = c.begin("n", "A", 5);
        MutualExclusionChecker.Hold inner = c.begin("n", "A", 5);
        assertThat(c.intervals("n")).allMatch(MutualExclusionChecker.Interval::open);
        inner.end();
        outer.end();
        c.assertNoOverlap();
        c.assertTokensStrictlyIncreasing("n");
    }

    @Test
    void tokensThatDoNotIncreaseAreReported() {
        MutualExclusionChecker c = new MutualExclusionChecker();
        c.begin("n", "A", 5).end();
        c.begin("n", "B", 5).end();
        assertThatThrownBy(() -> c.assertTokensStrictlyIncreasing("n")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("hold #0 by A had token 5, hold #1 by B has token 5");
        MutualExclusionChecker d = new MutualExclusionChecker();
        d.begin("n", "A", 9).end();
        d.begin("n", "B", 3).end();
        assertThatThrownBy(() -> d.assertTokensStrictlyIncreasing("n")).isInstanceOf(AssertionError.class);
    }

    @Test
    void manyThreadsUnderARealLockShowNoOverlapAndIncreasingTokens() throws Exception {
        MutualExclusionChecker c = new MutualExclusionChecker();
        ReentrantLock lock = new ReentrantLock();
        AtomicLong tokens = new AtomicLong();
        int threads = 8;
        int rounds = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String owner = "owner-" + t;
                futures.add(pool.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < rounds; i++) {
                        String name = "lock-" + (i % 3);
                        lock.lock();
                        try {
                            MutualExclusionChecker.Hold h = c.begin(name, owner, tokens.incrementAndGet());
                            Thread.onSpinWait();
                            h.end();
                        } finally {
                            lock.unlock();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        c.assertNoOverlap();
        for (int n = 0; n < 3; n++) {
            c.assertTokensStrictlyIncreasing("lock-" + n);
        }
        assertThat(c.names()).hasSize(3);
        assertThat(c.intervals("lock-0").size() + c.intervals("lock-1").size() + c.intervals("lock-2").size())
                .isEqualTo(threads * rounds);
    }

    @Test
    void manyThreadsWithoutALockAreCaught() throws Exception {
        MutualExclusionChecker c = new MutualExclusionChecker();
        int threads = 8;
        CyclicBarrier allInside = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String owner = "owner-" + t;
                long token = t;
                futures.add(pool.submit(() -> {
                    MutualExclusionChecker.Hold h = c.begin("shared", owner, token);
                    allInside.await(10, TimeUnit.SECONDS); // everyone is inside at once
                    h.end();
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        // the k-th owner to begin overlaps the k-1 before it: 0 + 1 + ... + 7
        assertThat(c.overlaps()).hasSize(threads * (threads - 1) / 2);
        assertThatThrownBy(c::assertNoOverlap).isInstanceOf(AssertionError.class);
    }
}
