package io.reactivelocks.internal.rwlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalReadWriteStore;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/** The read-write lock engine on the in-memory store, on virtual time: intents, their refresh and expiry, waiting. */
class ReadWriteLockVirtualTimeTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private LocalReadWriteStore store;
    private LockOptions options;
    private ReadWriteLock a;
    private ReadWriteLock b;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        store = new LocalReadWriteStore(vts, LockClock.of(vts));
        // a 10-minute backoff: only a notification, an expiry or an intent refresh can wake a waiter within a test
        options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(3))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .scheduler(vts).clock(LockClock.of(vts))
                .build();
        a = ReadWriteLock.create(store, ReadWriteLockOptions.of(options));
        b = ReadWriteLock.create(store, ReadWriteLockOptions.of(options));
    }

    @AfterEach
    void tearDown() {
        a.close().block(VERIFY);
        b.close().block(VERIFY);
        assertThat(store.holders("rw").block(VERIFY).isEmpty()).as("grants or intents left").isTrue();
        vts.dispose();
    }

    @Test
    void aWaitingWritersIntentIsRefreshedWhileItWaitsAndRemovedOnCancel() {
        Lease reader = a.read().tryAcquire("rw").block(VERIFY);
        AtomicReference<Lease> w = new AtomicReference<>();
        Disposable writer = b.write().acquire("rw").subscribe(w::set);
        vts.advanceTimeBy(Duration.ofSeconds(30)); // ten lease times: the intent lives because the writer asks again
        assertThat(store.holders("rw").block(VERIFY).waitingWriters()).hasSize(1);
        assertThat(a.read().tryAcquire("rw").block(VERIFY)).as("a new reader while a writer waits").isNull();
        writer.dispose();
        assertThat(store.holders("rw").block(VERIFY).waitingWriters()).as("the cancelled writer's intent").isEmpty();
        Lease second = a.read().tryAcquire("rw").block(VERIFY);
        assertThat(second).as("readers enter again").isNotNull();
        assertThat(w.get()).isNull();
        reader.release().block(VERIFY);
        second.release().block(VERIFY);
    }

    @Test
    void anAbandonedIntentExpiresAfterOneLeaseTime() {
        Lease reader = a.read().tryAcquire("rw").block(VERIFY);
        // a writer that asked once and died: its intent stays one lease time
        assertThat(store.tryGrant("rw", "dead", LockMode.WRITE, true, true, Duration.ofSeconds(3)).block(VERIFY))
                .isInstanceOf(PermitGrant.Busy.class);
        assertThat(b.read().tryAcquire("rw").block(VERIFY)).isNull();
        AtomicReference<Lease> late = new AtomicReference<>();
        Disposable waiting = b.read().acquire("rw").subscribe(late::set);
        vts.advanceTimeBy(Duration.ofMillis(2900));
        assertThat(late.get()).isNull();
        vts.advanceTimeBy(Duration.ofMillis(200));
        assertThat(late.get()).as("woken by the intent's expiry").isNotNull();
        waiting.dispose();
        late.get().release().block(VERIFY);
        reader.release().block(VERIFY);
    }

    @Test
    void aWriterWaitsForTheReadersAndTimesOut() {
        Lease reader = a.read().tryAcquire("rw").block(VERIFY);
        LockOptions bounded = options.mutate().waitTimeout(Duration.ofSeconds(5)).build();
        StepVerifier.withVirtualTime(() -> b.write().acquire("rw", bounded), () -> vts, Long.MAX_VALUE)
                .thenAwait(Duration.ofSeconds(5))
                .expectError(LockTimeoutException.class)
                .verify(VERIFY);
        assertThat(store.holders("rw").block(VERIFY).waitingWriters()).as("the timed-out writer's intent").isEmpty();
        reader.release().block(VERIFY);
    }
}
