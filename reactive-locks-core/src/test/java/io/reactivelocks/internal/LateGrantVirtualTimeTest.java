package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalReadWriteStore;
import io.reactivelocks.local.LocalSemaphoreStore;
import io.reactivelocks.rwlock.LockMode;
import io.reactivelocks.rwlock.ReadWriteLock;
import io.reactivelocks.rwlock.ReadWriteLockOptions;
import io.reactivelocks.semaphore.Semaphore;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import io.reactivelocks.spi.RenewOutcome;
import io.reactivelocks.spi.RenewRequest;
import io.reactivelocks.spi.rwlock.ReadWriteHolders;
import io.reactivelocks.spi.rwlock.ReadWriteStore;
import io.reactivelocks.spi.semaphore.PermitGrant;
import io.reactivelocks.spi.semaphore.SemaphoreStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.retry.Retry;

/**
 * One rule for a grant whose answer came after its validity, for the concepts of the grant engine
 * (semaphore, read-write lock): given back, asked again while the wait lasts; a try asks once more.
 * The stores are the in-memory ones behind a delay of the first answers (a paused JVM, a slow store).
 */
class LateGrantVirtualTimeTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);
    /** Longer than the 3 s lease: a grant answered this late has no validity left. */
    private static final Duration LATE = Duration.ofSeconds(4);

    private VirtualTimeScheduler vts;
    private LockOptions options;
    private final AtomicInteger lateAnswers = new AtomicInteger();
    private final AtomicInteger grantCalls = new AtomicInteger();
    private LocalSemaphoreStore semaphores;
    private LocalReadWriteStore readWrite;
    private Semaphore semaphore;
    private ReadWriteLock rw;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        semaphores = new LocalSemaphoreStore(vts, LockClock.of(vts));
        readWrite = new LocalReadWriteStore(vts, LockClock.of(vts));
        options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(3))
                .requestTimeout(Duration.ofSeconds(10))
                .backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).maxBackoff(Duration.ofMinutes(10)).jitter(0))
                .scheduler(vts).clock(LockClock.of(vts))
                .build();
        semaphore = Semaphore.create(new SlowSemaphoreStore(semaphores), options);
        rw = ReadWriteLock.create(new SlowReadWriteStore(readWrite), ReadWriteLockOptions.of(options));
    }

    @AfterEach
    void tearDown() {
        semaphore.close().block(VERIFY);
        rw.close().block(VERIFY);
        assertThat(semaphores.heldCount("s")).as("permits left").isZero();
        ReadWriteHolders left = readWrite.holders("rw").block(VERIFY);
        assertThat(left.readers()).as("read grants left").isEmpty();
        assertThat(left.writer()).as("write grant left").isNull();
        vts.dispose();
    }

    /** The first {@code n} grant answers come {@link #LATE}. */
    private <T> Mono<T> answer(Mono<T> grant) {
        grantCalls.incrementAndGet();
        return lateAnswers.getAndDecrement() > 0 ? Mono.delay(LATE, vts).then(grant) : grant;
    }

    private <T> T await(Mono<T> acquire, Duration within) {
        AtomicReference<T> got = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        acquire.subscribe(got::set, error::set);
        vts.advanceTimeBy(within);
        assertThat(error.get()).as("error").isNull();
        return got.get();
    }

    @Test
    void aSemaphoreAcquireWhoseGrantCameBackLateAsksAgainAndGetsFreshPermits() {
        lateAnswers.set(1);
        List<Lease> got = await(semaphore.acquire("s", 3, 2, options.mutate().waitTimeout(Duration.ofMinutes(1)).build()), LATE);
        assertThat(got).as("granted by the second request, at once after the give-back").hasSize(2);
        assertThat(grantCalls).hasValue(2);
        assertThat(semaphores.heldCount("s")).as("the late grant's permits were given back").isEqualTo(2);
        got.forEach(l -> l.release().block(VERIFY));
    }

    @Test
    void aSemaphoreAcquireEndsWithTheTimeoutAskedForWhenEveryGrantComesBackLate() {
        lateAnswers.set(Integer.MAX_VALUE);
        AtomicReference<Throwable> error = new AtomicReference<>();
        semaphore.acquire("s", 3, 1, options.mutate().waitTimeout(Duration.ofSeconds(10)).build()).subscribe(null, error::set);
        vts.advanceTimeBy(Duration.ofMillis(9_999));
        assertThat(error.get()).isNull();
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(error.get()).isInstanceOf(LockTimeoutException.class);
        vts.advanceTimeBy(LATE); // the request in flight at the timeout settles: its grant is released
        assertThat(grantCalls).hasValue(3);
    }

    @Test
    void aSemaphoreTryWhoseGrantCameBackLateAsksOnceMore() {
        lateAnswers.set(1);
        Lease got = await(semaphore.tryAcquire("s", 2), LATE);
        assertThat(got).isNotNull();
        assertThat(grantCalls).hasValue(2);
        got.release().block(VERIFY);
    }

    @Test
    void aSemaphoreTryWhoseGrantsCameBackLateTwiceAnswersAsBusy() {
        lateAnswers.set(Integer.MAX_VALUE);
        AtomicReference<Boolean> completedEmpty = new AtomicReference<>();
        semaphore.tryAcquire("s", 2).subscribe(l -> completedEmpty.set(false), e -> completedEmpty.set(false),
                () -> completedEmpty.compareAndSet(null, true));
        vts.advanceTimeBy(LATE.multipliedBy(2));
        assertThat(completedEmpty.get()).as("completed empty").isTrue();
        assertThat(grantCalls).hasValue(2);
    }

    @Test
    void aReadWriteAcquireWhoseGrantCameBackLateAsksAgain() {
        lateAnswers.set(1);
        Lease w = await(rw.write().acquire("rw", options.mutate().waitTimeout(Duration.ofMinutes(1)).build()), LATE);
        assertThat(w).isNotNull();
        assertThat(grantCalls).hasValue(2);
        assertThat(readWrite.holders("rw").block(VERIFY).writer().owner()).as("only the second grant holds").isNotNull();
        w.release().block(VERIFY);
    }

    @Test
    void aReadWriteTryWhoseGrantCameBackLateAsksOnceMoreThenAnswersAsBusy() {
        lateAnswers.set(1);
        Lease r = await(rw.read().tryAcquire("rw"), LATE);
        assertThat(r).isNotNull();
        r.release().block(VERIFY);
        lateAnswers.set(Integer.MAX_VALUE);
        grantCalls.set(0);
        AtomicReference<Boolean> completedEmpty = new AtomicReference<>();
        rw.write().tryAcquire("rw").subscribe(l -> completedEmpty.set(false), e -> completedEmpty.set(false),
                () -> completedEmpty.compareAndSet(null, true));
        vts.advanceTimeBy(LATE.multipliedBy(2));
        assertThat(completedEmpty.get()).isTrue();
        assertThat(grantCalls).hasValue(2);
    }

    private final class SlowSemaphoreStore implements SemaphoreStore {
        private final SemaphoreStore delegate;

        SlowSemaphoreStore(SemaphoreStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, Duration leaseTime) {
            return answer(delegate.tryGrant(name, owners, permits, leaseTime));
        }

        @Override
        public Mono<PermitGrant> tryGrant(String name, List<String> owners, int permits, boolean waiting, Duration leaseTime) {
            return answer(delegate.tryGrant(name, owners, permits, waiting, leaseTime));
        }

        @Override
        public Mono<Boolean> release(String name, String owner) {
            return delegate.release(name, owner);
        }

        @Override
        public Mono<List<Holder>> holders(String name) {
            return delegate.holders(name);
        }

        @Override
        public String name() {
            return "slow-" + delegate.name();
        }

        @Override
        public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
            return delegate.renew(batch);
        }

        @Override
        public Flux<LockEvent> events(String name) {
            return delegate.events(name);
        }

        @Override
        public Mono<Void> close() {
            return delegate.close();
        }
    }

    private final class SlowReadWriteStore implements ReadWriteStore {
        private final ReadWriteStore delegate;

        SlowReadWriteStore(ReadWriteStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public Mono<PermitGrant> tryGrant(String name, String owner, LockMode mode, boolean writerPreferring, boolean waiting,
                Duration leaseTime) {
            return answer(delegate.tryGrant(name, owner, mode, writerPreferring, waiting, leaseTime));
        }

        @Override
        public Mono<Boolean> release(String name, String owner) {
            return delegate.release(name, owner);
        }

        @Override
        public Mono<ReadWriteHolders> holders(String name) {
            return delegate.holders(name);
        }

        @Override
        public String name() {
            return "slow-" + delegate.name();
        }

        @Override
        public Mono<List<RenewOutcome>> renew(List<RenewRequest> batch) {
            return delegate.renew(batch);
        }

        @Override
        public Flux<LockEvent> events(String name) {
            return delegate.events(name);
        }

        @Override
        public Mono<Void> close() {
            return delegate.close();
        }
    }
}
