package io.reactivelocks.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The provider against a real redis-server, held to ShedLock's own expectations. ShedLock checks
 * its providers with {@code AbstractLockProviderIntegrationTest} and
 * {@code AbstractExtensibleLockProviderIntegrationTest} from {@code shedlock-test-support}, which is
 * not published to Maven Central; each of their cases is restated here under the same name, with
 * the same steps. Where a case waits, it waits with Awaitility for the store's state instead of
 * sleeping a fixed time, and the waits are shorter than ShedLock's (lockAtLeastFor 1 s instead of
 * 2 s, the extended lock's first deadline 1 s instead of 2 s) to keep the suite short. The cases
 * after those are ours: renewal past the lease time, fencing tokens, blocking rules.
 */
class ReactiveLocksLockProviderTest {

    private static RedisShedLock redis;
    private static ReactiveLocksLockProvider provider;

    /** A fresh name per test, as ShedLock's suite does. */
    private final String name1 = "shedlock-" + UUID.randomUUID();

    @BeforeAll
    static void start() {
        redis = RedisShedLock.shared();
        provider = new ReactiveLocksLockProvider(redis.client);
    }

    private static LockConfiguration lockConfig(String name) {
        return lockConfig(name, Duration.ofMinutes(5), Duration.ZERO);
    }

    private static LockConfiguration lockConfig(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
        return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
    }

    private static void assertLocked(String name) {
        assertThat(redis.state(name)).as("state of %s in Redis", name).isInstanceOf(LockState.Held.class);
    }

    private static void assertUnlocked(String name) {
        assertThat(redis.state(name)).as("state of %s in Redis", name).isInstanceOf(LockState.Free.class);
    }

    private static void awaitUnlocked(String name, Duration atMost) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(20))
                .until(() -> redis.state(name) instanceof LockState.Free);
    }

    private SimpleLock lock(Duration lockAtMostFor) {
        Optional<SimpleLock> lock = provider.lock(lockConfig(name1, lockAtMostFor, Duration.ZERO));
        assertThat(lock).isNotEmpty();
        assertLocked(name1);
        return lock.get();
    }

    // ---- AbstractLockProviderIntegrationTest ----

    @Test
    void shouldCreateLock() {
        Optional<SimpleLock> lock = provider.lock(lockConfig(name1));
        assertThat(lock).isNotEmpty();
        assertLocked(name1);
        lock.get().unlock();
        assertUnlocked(name1);
    }

    @Test
    void shouldNotReturnSecondLock() {
        Optional<SimpleLock> lock = provider.lock(lockConfig(name1));
        assertThat(lock).isNotEmpty();
        assertThat(provider.lock(lockConfig(name1))).isEmpty();
        lock.get().unlock();
    }

    @Test
    void shouldCreateTwoIndependentLocks() {
        Optional<SimpleLock> lock1 = provider.lock(lockConfig(name1));
        assertThat(lock1).isNotEmpty();
        Optional<SimpleLock> lock2 = provider.lock(lockConfig(name1 + "-2"));
        assertThat(lock2).isNotEmpty();
        lock1.get().unlock();
        lock2.get().unlock();
        assertUnlocked(name1);
        assertUnlocked(name1 + "-2");
    }

    @Test
    void shouldLockTwiceInARow() {
        Optional<SimpleLock> lock1 = provider.lock(lockConfig(name1));
        assertThat(lock1).isNotEmpty();
        lock1.get().unlock();
        Optional<SimpleLock> lock2 = provider.lock(lockConfig(name1));
        assertThat(lock2).isNotEmpty();
        lock2.get().unlock();
    }

    /** lockAtMostFor ends a lock that is never unlocked (ShedLock: 50 ms, then sleeps twice that). */
    @Test
    void shouldTimeout() {
        Optional<SimpleLock> lock1 = provider.lock(lockConfig(name1, Duration.ofMillis(50), Duration.ZERO));
        assertThat(lock1).isNotEmpty();
        awaitUnlocked(name1, Duration.ofSeconds(2));
        Optional<SimpleLock> lock2 = provider.lock(lockConfig(name1, Duration.ofMillis(50), Duration.ZERO));
        assertThat(lock2).isNotEmpty();
        lock2.get().unlock();
    }

    @Test
    void shouldBeAbleToLockRightAfterUnlock() {
        LockConfiguration config = lockConfig(name1);
        for (int i = 0; i < 10; i++) {
            Optional<SimpleLock> lock = provider.lock(config);
            assertThat(lock).as("round %d", i).isNotEmpty();
            assertThat(provider.lock(config)).isEmpty();
            lock.get().unlock();
        }
    }

    /**
     * ShedLock's fuzz test, smaller: threads race through the locking executor; the tasks that ran
     * never overlapped (an unsynchronised counter loses no update) and their tokens increase.
     */
    @Test
    void fuzzTestShouldPass() throws Exception {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        int[] counter = {0};
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                done.add(threads.submit(() -> {
                    for (int i = 0; i < 25; i++) {
                        executor.executeWithLock((Runnable) () -> {
                            int seen = counter[0];
                            Thread.yield();
                            counter[0] = seen + 1;
                            tokens.add(ReactiveLocksLockProvider.currentLease().orElseThrow().token());
                        }, lockConfig(name1, Duration.ofSeconds(5), Duration.ZERO));
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        synchronized (tokens) {
            assertThat(tokens).isNotEmpty().hasSize(counter[0]);
            assertThat(tokens).isSorted().doesNotHaveDuplicates();
        }
        assertUnlocked(name1);
    }

    /** Unlocked early, the lock stays until lockAtLeastFor (ShedLock: 2 s; 1 s here). */
    @Test
    void shouldLockAtLeastFor() {
        Duration atLeast = Duration.ofSeconds(1);
        LockConfiguration config = lockConfig(name1, atLeast.multipliedBy(2), atLeast);
        Optional<SimpleLock> lock1 = provider.lock(config);
        assertThat(lock1).isNotEmpty();
        lock1.get().unlock();
        assertThat(provider.lock(lockConfig(name1))).as("grace period did not pass yet").isEmpty();
        assertLocked(name1);

        SimpleLock lock3 = await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20))
                .until(() -> provider.lock(lockConfig(name1)), Optional::isPresent).get();
        assertThat(ClockProvider.now()).as("taken again only after lockAtLeastFor")
                .isAfterOrEqualTo(config.getLockAtLeastUntil().minusMillis(20));
        lock3.unlock();
    }

    // ---- AbstractExtensibleLockProviderIntegrationTest ----

    @Test
    void shouldBeAbleToExtendLock() {
        Duration original = Duration.ofSeconds(1);
        SimpleLock lock = lock(original);
        Optional<SimpleLock> newLock = lock.extend(Duration.ofSeconds(10), Duration.ZERO);
        assertThat(newLock).isNotEmpty();
        // held past the original lockAtMostFor
        await().during(original.plusMillis(300)).atMost(original.plusSeconds(2))
                .until(() -> redis.state(name1) instanceof LockState.Held);
        newLock.get().unlock();
        assertUnlocked(name1);
    }

    @Test
    void shouldNotBeAbleToExtendUnlockedLock() {
        SimpleLock lock = lock(Duration.ofSeconds(2));
        lock.unlock();
        assertUnlocked(name1);
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void shouldNotBeAbleToExtendExpiredLock() {
        Optional<SimpleLock> lock = provider.lock(lockConfig(name1, Duration.ofMillis(1), Duration.ZERO));
        assertThat(lock).isNotEmpty();
        awaitUnlocked(name1, Duration.ofSeconds(2));
        assertThat(lock.get().extend(Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
        assertUnlocked(name1);
    }

    @Test
    void shouldBeAbleToExtendAtLeast() {
        SimpleLock lock = lock(Duration.ofSeconds(10));
        Optional<SimpleLock> newLock = lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9));
        assertThat(newLock).isNotEmpty();
        newLock.get().unlock();
        assertLocked(name1);
    }

    @Test
    void lockCanNotBeExtendedTwice() {
        SimpleLock lock = lock(Duration.ofSeconds(10));
        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9))).isNotEmpty();
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9)))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void lockCanNotBeUnlockedAfterExtending() {
        SimpleLock lock = lock(Duration.ofSeconds(10));
        assertThat(lock.extend(Duration.ofSeconds(10), Duration.ofSeconds(9))).isNotEmpty();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    }

    // ---- ours ----

    /** The lease is renewed while the task runs, past its lease time, and given up at lockAtMostFor. */
    @Test
    void theLeaseIsRenewedPastItsLeaseTimeUntilLockAtMostFor() {
        Duration atMost = RedisShedLock.LEASE_TIME.multipliedBy(2).plusMillis(500);
        SimpleLock lock = lock(atMost);
        long token = ((LockState.Held) redis.state(name1)).token();
        await().during(RedisShedLock.LEASE_TIME.multipliedBy(2)).atMost(atMost)
                .until(() -> redis.state(name1) instanceof LockState.Held held && held.token() == token);
        awaitUnlocked(name1, Duration.ofSeconds(2));
        assertThat(provider.heldLease(name1)).isEmpty();
        assertThat(lock.extend(Duration.ofSeconds(1), Duration.ZERO)).as("given up: cannot be extended").isEmpty();
    }

    /** A task sees its lease — the token the store holds — and the tokens of later runs are greater. */
    @Test
    void aTaskReadsItsFencingTokenAndLaterRunsGetGreaterOnes() throws Throwable {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            executor.executeWithLock((LockingTaskExecutor.Task) () -> {
                Lease lease = ReactiveLocksLockProvider.currentLease().orElseThrow();
                assertThat(lease.isValid()).isTrue();
                assertThat(provider.heldLease(name1)).containsSame(lease);
                LockState.Held held = (LockState.Held) redis.state(name1);
                assertThat(held.token()).isEqualTo(lease.token());
                assertThat(held.owner()).isEqualTo(lease.owner());
                tokens.add(lease.token());
            }, lockConfig(name1));
        }
        assertThat(tokens).hasSize(2);
        assertThat(tokens.get(1)).isGreaterThan(tokens.get(0));
        assertThat(ReactiveLocksLockProvider.currentLease().map(Lease::token)).isNotIn(tokens.get(0), tokens.get(1));
        assertThat(provider.heldLease(name1)).isEmpty();
        assertUnlocked(name1);
    }

    /**
     * A lease lost while the task runs (here: the Redis data is wiped, so the renewal finds no
     * lock) is signalled to the task; the lock has ended, and its unlock is harmless.
     */
    @Test
    void aLostLeaseIsSignalledAndTheLockEnds() {
        SimpleLock lock = lock(Duration.ofSeconds(30));
        Lease lease = provider.heldLease(name1).orElseThrow();
        try (StatefulRedisConnection<String, String> raw = redis.redis.connect()) {
            raw.sync().del(raw.sync().keys("*" + name1 + "*").toArray(new String[0]));
        }
        StepVerifier.create(lease.lost()).expectComplete().verify(RedisShedLock.TIMEOUT);
        assertThat(provider.heldLease(name1)).isEmpty();
        Optional<SimpleLock> next = provider.lock(lockConfig(name1));
        assertThat(next).as("free for the next run").isNotEmpty();
        assertThat(redis.state(name1)).isInstanceOfSatisfying(LockState.Held.class,
                held -> assertThat(held.token()).isGreaterThan(lease.token()));
        lock.unlock();
        assertThat(redis.state(name1)).as("the old lock's unlock leaves the new holder alone").isInstanceOf(LockState.Held.class);
        next.get().unlock();
        assertUnlocked(name1);
    }

    /** Another provider on another client is another process: it cannot take a held lock. */
    @Test
    void twoProvidersOnTwoClientsExcludeEachOther() {
        LockProvider other = new ReactiveLocksLockProvider(redis.client);
        SimpleLock lock = lock(Duration.ofSeconds(10));
        assertThat(other.lock(lockConfig(name1))).isEmpty();
        lock.unlock();
        Optional<SimpleLock> taken = other.lock(lockConfig(name1));
        assertThat(taken).isNotEmpty();
        taken.get().unlock();
        assertUnlocked(name1);
    }

    @Test
    void refusesToBlockANonBlockingThread() {
        StepVerifier.create(Mono.fromCallable(() -> provider.lock(lockConfig(name1))).subscribeOn(Schedulers.parallel()))
                .expectError(IllegalStateException.class)
                .verify(RedisShedLock.TIMEOUT);
        assertUnlocked(name1);
    }

    @Test
    void extendChecksItsArguments() {
        SimpleLock lock = lock(Duration.ofSeconds(10));
        assertThatThrownBy(() -> lock.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockAtLeastFor");
        assertThatThrownBy(() -> lock.extend(null, Duration.ZERO))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("lockAtMostFor");
        lock.unlock();
        assertUnlocked(name1);
    }
}
