package io.reactivelocks.spring.integration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.LockStore;
import io.reactivelocks.redis.RedisLockOptions;
import io.reactivelocks.redis.RedisLocks;
import io.reactivelocks.test.server.RedisServer;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The registry against a real redis-server, held to the behaviours Spring Integration's own
 * {@code RedisLockRegistryTests} and {@code JdbcLockRegistryTests} check — reentrancy per thread,
 * exclusion between threads and between registries, unlock only by the owner, tryLock timeouts,
 * interruptible waits, renewal and expiry — plus fencing tokens and loss.
 */
class ReactiveLocksLockRegistryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Duration LEASE_TIME = Duration.ofSeconds(1);

    private static RedisServer server;
    private static RedisClient redis;
    private static LockStore store;
    private static LockClient client;
    private static ExecutorService threads;

    private final String key = "si-" + UUID.randomUUID();
    private final ReactiveLocksLockRegistry registry = new ReactiveLocksLockRegistry(client);
    /** Another process: a registry on its own client. */
    private final ReactiveLocksLockRegistry otherRegistry = new ReactiveLocksLockRegistry(client);

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        RedisURI uri = RedisURI.create(server.url());
        redis = RedisClient.create(uri);
        store = RedisLocks.connect(redis, RedisLockOptions.builder().keyPrefix("rlsi:" + UUID.randomUUID() + ":").uri(uri)
                .build());
        client = store.locks(LockOptions.builder().leaseTime(LEASE_TIME).build());
        // the first request loads scripts and classes; on a loaded machine it may pass the request timeout
        client.tryAcquire("warm-up").flatMap(Lease::release).retry(2).block(Duration.ofSeconds(60));
        threads = Executors.newCachedThreadPool();
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
        try {
            store.close().block(TIMEOUT);
        } finally {
            redis.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            server.close();
        }
    }

    @AfterEach
    void nothingPending() {
        assertThat(client.metrics().pendingAcquires()).as("acquires left waiting").isEmpty();
    }

    private static LockState state(String name) {
        return client.inspect(name).block(TIMEOUT);
    }

    private static long heldToken(String name) {
        LockState state = state(name);
        assertThat(state).as("state of %s in Redis", name).isInstanceOf(LockState.Held.class);
        return ((LockState.Held) state).token();
    }

    private static void assertFree(String name) {
        assertThat(state(name)).as("state of %s in Redis", name).isInstanceOf(LockState.Free.class);
    }

    private <T> T onOtherThread(java.util.concurrent.Callable<T> call) throws Exception {
        return threads.submit(call).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void lockTakesALeaseAndUnlockReleasesItWithGreaterTokensEachTime() {
        ReactiveLocksLock lock = registry.obtain(key);
        long previous = 0;
        for (int i = 0; i < 3; i++) {
            lock.lock();
            try {
                assertThat(lock.isHeld()).isTrue();
                assertThat(heldToken(key)).isEqualTo(lock.token()).isGreaterThan(previous);
                previous = lock.token();
            } finally {
                lock.unlock();
            }
            assertFree(key);
            assertThat(lock.lease()).isNull();
            assertThat(lock.isHeld()).isFalse();
        }
    }

    @Test
    void lockInterruptiblyTakesTheLock() throws InterruptedException {
        ReactiveLocksLock lock = registry.obtain(key);
        lock.lockInterruptibly();
        assertThat(heldToken(key)).isEqualTo(lock.token());
        lock.unlock();
        assertFree(key);
    }

    @Test
    void obtainReturnsOneLockPerKeyAndTwoKeysAreIndependent() {
        assertThat(registry.obtain(key)).isSameAs(registry.obtain(key));
        ReactiveLocksLock a = registry.obtain(key);
        ReactiveLocksLock b = registry.obtain(key + "-b");
        a.lock();
        b.lock();
        assertThat(heldToken(key)).isEqualTo(a.token());
        assertThat(heldToken(key + "-b")).isEqualTo(b.token());
        b.unlock();
        a.unlock();
        assertFree(key);
        assertFree(key + "-b");
    }

    @Test
    void reentrantPerThreadOneLeaseUntilTheLastUnlock() throws InterruptedException {
        ReactiveLocksLock lock = registry.obtain(key);
        lock.lock();
        Lease lease = lock.lease();
        lock.lockInterruptibly();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(10, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(lock.lease()).isSameAs(lease);
        for (int i = 0; i < 3; i++) {
            lock.unlock();
            assertThat(heldToken(key)).as("still held after an inner unlock").isEqualTo(lease.token());
        }
        lock.unlock();
        assertFree(key);
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void twoThreadsOfOneRegistryExcludeEachOther() throws Exception {
        ReactiveLocksLock lock = registry.obtain(key);
        lock.lock();
        try {
            boolean immediate = onOtherThread(() -> lock.tryLock());
            boolean waited = onOtherThread(() -> lock.tryLock(100, TimeUnit.MILLISECONDS));
            assertThat(immediate).isFalse();
            assertThat(waited).isFalse();
        } finally {
            lock.unlock();
        }
        boolean other = onOtherThread(() -> {
            boolean got = lock.tryLock();
            lock.unlock();
            return got;
        });
        assertThat(other).isTrue();
        assertFree(key);
    }

    @Test
    void twoRegistriesExcludeEachOtherAndAWaiterGetsTheLockOnUnlock() throws Exception {
        ReactiveLocksLock mine = registry.obtain(key);
        ReactiveLocksLock theirs = otherRegistry.obtain(key);
        mine.lock();
        long first = mine.token();
        assertThat(theirs.tryLock()).isFalse();
        Future<Long> waiter = threads.submit(() -> {
            theirs.lock();
            try {
                return theirs.token();
            } finally {
                theirs.unlock();
            }
        });
        await().atMost(TIMEOUT).until(() -> client.metrics().pendingAcquireCount() == 1);
        assertThat(waiter).isNotDone();
        mine.unlock();
        assertThat(waiter.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isGreaterThan(first);
        assertFree(key);
    }

    @Test
    void unlockByAnotherThreadFails() throws Exception {
        ReactiveLocksLock lock = registry.obtain(key);
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalStateException.class).hasMessageContaining("You do not own");
        lock.lock();
        try {
            ExecutionException failure = (ExecutionException) org.assertj.core.api.Assertions.catchThrowable(
                    () -> onOtherThread(() -> {
                        lock.unlock();
                        return null;
                    }));
            assertThat(failure.getCause()).isInstanceOf(IllegalStateException.class).hasMessageContaining("You do not own");
            assertThat(heldToken(key)).isEqualTo(lock.token());
        } finally {
            lock.unlock();
        }
        assertFree(key);
    }

    @Test
    void tryLockWaitsItsTimeThenGivesUpLeavingNothing() throws Exception {
        ReactiveLocksLock mine = registry.obtain(key);
        mine.lock();
        try {
            long start = System.nanoTime();
            assertThat(otherRegistry.obtain(key).tryLock(300, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(290));
            assertThat(heldToken(key)).isEqualTo(mine.token());
        } finally {
            mine.unlock();
        }
        assertFree(key);
        ReactiveLocksLock theirs = otherRegistry.obtain(key);
        assertThat(theirs.tryLock(2, TimeUnit.SECONDS)).isTrue();
        theirs.unlock();
    }

    @Test
    void anInterruptCancelsTheWaitingAcquireAndLeavesNothingOnTheStore() throws Exception {
        ReactiveLocksLock mine = registry.obtain(key);
        ReactiveLocksLock theirs = otherRegistry.obtain(key);
        mine.lock();
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                theirs.lockInterruptibly();
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        }, "interrupted-waiter");
        waiter.start();
        await().atMost(TIMEOUT).until(() -> client.metrics().pendingAcquireCount() == 1);
        waiter.interrupt();
        assertThat(outcome.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isInstanceOf(InterruptedException.class);
        await().atMost(TIMEOUT).until(() -> client.metrics().pendingAcquireCount() == 0);
        assertThat(theirs.isAcquiredInThisProcess()).isFalse();
        mine.unlock();
        // the cancelled acquire does not take the freed lock
        await().during(Duration.ofMillis(300)).atMost(TIMEOUT).until(() -> state(key) instanceof LockState.Free);
    }

    @Test
    void theLeaseIsRenewedWhileHeldAndRenewLockChecksIt() {
        ReactiveLocksLock lock = registry.obtain(key);
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(IllegalStateException.class);
        lock.lock();
        try {
            long token = lock.token();
            await().during(LEASE_TIME.multipliedBy(2).plusMillis(500)).atMost(LEASE_TIME.multipliedBy(4))
                    .until(() -> state(key) instanceof LockState.Held held && held.token() == token && lock.isHeld());
            registry.renewLock(key);
            registry.renewLock(key, LEASE_TIME);
            assertThatThrownBy(() -> registry.renewLock(key, LEASE_TIME.multipliedBy(5)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ttl");
        } finally {
            lock.unlock();
        }
        assertFree(key);
        assertThatThrownBy(() -> registry.renewLock(key)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aLockWithItsOwnTtlIsRenewedWithIt() {
        ReactiveLocksLock lock = registry.obtain(key);
        lock.lock(Duration.ofSeconds(3));
        try {
            registry.renewLock(key, Duration.ofSeconds(3));
            assertThat(heldToken(key)).isEqualTo(lock.token());
        } finally {
            lock.unlock();
        }
        assertFree(key);
    }

    @Test
    void aLostLeaseIsSignalledAndUnlockReportsIt() {
        ReactiveLocksLock lock = registry.obtain(key);
        lock.lock();
        Lease lease = lock.lease();
        try (StatefulRedisConnection<String, String> raw = redis.connect()) {
            raw.sync().flushall();
        }
        StepVerifier.create(lease.lost()).expectComplete().verify(TIMEOUT);
        assertThat(lock.isHeld()).isFalse();
        assertThat(lock.isAcquiredInThisProcess()).as("still owned by its thread until unlock").isTrue();
        ReactiveLocksLock theirs = otherRegistry.obtain(key);
        assertThat(theirs.tryLock()).isTrue();
        assertThat(theirs.token()).isGreaterThan(lease.token());
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining(String.valueOf(lease.token()));
        assertThat(lock.isAcquiredInThisProcess()).isFalse();
        assertThat(heldToken(key)).as("the unlock of a lost lease leaves the new holder alone").isEqualTo(theirs.token());
        theirs.unlock();
        assertFree(key);
    }

    @Test
    void executeLockedRunsUnderTheLock() throws Exception {
        long token = registry.executeLocked(key, () -> registry.obtain(key).token());
        assertThat(token).isPositive();
        assertThat(registry.executeLocked(key, Duration.ofSeconds(2), () -> heldToken(key))).isGreaterThan(token);
        assertFree(key);
    }

    @Test
    void expireUnusedOlderThanForgetsOnlyLocksNotHeld() {
        ReactiveLocksLock held = registry.obtain(key);
        ReactiveLocksLock unused = registry.obtain(key + "-unused");
        held.lock();
        try {
            registry.expireUnusedOlderThan(0);
            assertThat(registry.obtain(key)).isSameAs(held);
            assertThat(registry.obtain(key + "-unused")).isNotSameAs(unused);
        } finally {
            held.unlock();
        }
    }

    @Test
    void conditionsAreNotSupportedAndArgumentsAreChecked() throws InterruptedException {
        ReactiveLocksLock lock = registry.obtain(key);
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> registry.obtain(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("lockKey");
        assertThatThrownBy(() -> registry.obtain("")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lockKey");
        assertThat(registry.obtain(key + "-free").tryLock(Long.MAX_VALUE, TimeUnit.DAYS)).as("an unbounded wait is capped").isTrue();
        registry.obtain(key + "-free").unlock();
        assertThatThrownBy(() -> lock.tryLock(Duration.ofSeconds(-1), LEASE_TIME))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waitTime");
        assertThatThrownBy(() -> new ReactiveLocksLockRegistry(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("client");
    }

    @Test
    void refusesToBlockANonBlockingThread() {
        ReactiveLocksLock lock = registry.obtain(key);
        StepVerifier.create(Mono.fromCallable(lock::tryLock).subscribeOn(Schedulers.parallel()))
                .expectError(IllegalStateException.class)
                .verify(TIMEOUT);
        assertThat(lock.isAcquiredInThisProcess()).isFalse();
        assertFree(key);
    }
}
