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
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
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
                .waitTimeout(null) // waits until woken: these tests advance past the default 30 s
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

    /**
     * A release wakes one local waiting writer, not all: a chain of 4 writers on one lock instance
     * (each releases at once) asks the store once per handoff; waking every waiter would ask
     * 4 + 3 + 2 + 1 times. With a reader among the waiters, a release wakes everyone (a writer
     * leaving lets every reader in).
     */
    @Test
    void aReleaseWakesOneWaitingWriterButEveryoneWhileAReaderWaits() {
        AtomicInteger attempts = new AtomicInteger();
        ReadWriteLock c = ReadWriteLock.create(counting(attempts), ReadWriteLockOptions.of(options));
        try {
            Lease holder = c.write().tryAcquire("rw").block(VERIFY);
            AtomicInteger granted = new AtomicInteger();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                subs.add(c.write().acquire("rw").flatMap(l -> l.release().doOnSuccess(x -> granted.incrementAndGet())).subscribe());
            }
            vts.advanceTimeBy(Duration.ofMillis(100));
            int before = attempts.get();
            holder.release().block(VERIFY);
            vts.advanceTimeBy(Duration.ofMillis(100));
            assertThat(granted).hasValue(4);
            assertThat(attempts.get() - before).as("attempts for 4 write handoffs").isEqualTo(4);
            subs.forEach(Disposable::dispose);

            Lease writer = c.write().tryAcquire("rw").block(VERIFY);
            AtomicInteger readers = new AtomicInteger();
            subs.add(c.read().acquire("rw").subscribe(l -> readers.incrementAndGet()));
            subs.add(c.read().acquire("rw").subscribe(l -> readers.incrementAndGet()));
            vts.advanceTimeBy(Duration.ofMillis(100));
            writer.release().block(VERIFY);
            vts.advanceTimeBy(Duration.ofMillis(100));
            assertThat(readers).as("both waiting readers woken by one release").hasValue(2);
            subs.forEach(Disposable::dispose);
        } finally {
            c.close().block(VERIFY);
        }
    }

    /** The in-memory store, counting the grant attempts. */
    private ReadWriteStore counting(AtomicInteger attempts) {
        return new ReadWriteStore() {
            @Override
            public String name() {
                return store.name();
            }

            @Override
            public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
                    Duration leaseTime) {
                return Mono.defer(() -> {
                    attempts.incrementAndGet();
                    return store.tryGrant(name, owner, mode, writerPreferring, waiting, leaseTime);
                });
            }

            @Override
            public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
                return store.renew(batch);
            }

            @Override
            public Mono<Boolean> release(String name, String owner) {
                return store.release(name, owner);
            }

            @Override
            public Mono<ReadWriteHolders> holders(String name) {
                return store.holders(name);
            }

            @Override
            public Flux<LockEvent> events(String name) {
                return store.events(name);
            }

            @Override
            public Mono<Void> close() {
                return Mono.empty();
            }
        };
    }
}
