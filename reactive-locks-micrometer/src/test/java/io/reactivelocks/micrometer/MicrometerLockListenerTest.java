package io.reactivelocks.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.spi.LockBackend;
import io.reactivelocks.test.FaultInjectingBackend;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** A real lock client over the in-memory backend, driven in virtual time, feeding a {@link SimpleMeterRegistry}. */
class MicrometerLockListenerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    private final LocalLockStore store = new LocalLockStore(vts, LockClock.of(vts));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LockOptions options = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(30)).scheduler(vts).clock(LockClock.of(vts)).build();
    private LockClient client;

    @AfterEach
    void close() {
        if (client != null) {
            client.close().block(TIMEOUT);
        }
        vts.dispose();
    }

    private LockClient client(LockBackend backend, MicrometerLockListener listener) {
        client = LockClient.create(backend, options, listener);
        return client;
    }

    @Test
    void acquireAndReleaseRecordWaitHoldAndRenewals() {
        LockBackend backend = new LocalLockBackend(store);
        LockClient locks = client(backend, MicrometerLockListener.forBackend(registry, backend));

        Lease lease = locks.acquire("order:1").block(TIMEOUT);
        vts.advanceTimeBy(Duration.ofSeconds(10));   // one renewal at lease/3
        lease.release().block(TIMEOUT);

        var acquired = registry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("backend", "local", "outcome", "acquired").timer();
        assertThat(acquired.count()).isEqualTo(1);
        var held = registry.get(MicrometerLockListener.HOLD).tags("backend", "local", "end", "released").timer();
        assertThat(held.count()).isEqualTo(1);
        assertThat(held.totalTime(TimeUnit.SECONDS)).isEqualTo(10.0);
        assertThat(registry.get(MicrometerLockListener.RENEWALS).tags("backend", "local", "outcome", "ok").counter().count())
                .isEqualTo(1.0);
        assertThat(registry.get(MicrometerLockListener.RENEWALS).tags("outcome", "failed").counter().count()).isZero();
        assertThat(registry.get(MicrometerLockListener.HOLD).tags("end", "lost").timer().count()).isZero();
        assertThat(registry.get(MicrometerLockListener.LOSSES).counter().count()).isZero();
    }

    @Test
    void tryAcquireOnAHeldLockCountsContention() {
        LockClient locks = client(new LocalLockBackend(store), new MicrometerLockListener(registry, "local"));

        Lease lease = locks.acquire("a").block(TIMEOUT);
        StepVerifier.create(locks.tryAcquire("a")).expectComplete().verify(TIMEOUT);
        lease.release().block(TIMEOUT);

        assertThat(registry.get(MicrometerLockListener.CONTENTION).tags("backend", "local").counter().count()).isEqualTo(1.0);
    }

    @Test
    void anAcquireThatTimesOutIsRecordedAsFailed() {
        LockClient locks = client(new LocalLockBackend(store), new MicrometerLockListener(registry, "local"));

        Lease lease = locks.acquire("a").block(TIMEOUT);
        StepVerifier.create(locks.acquire("a", options.mutate().waitTimeout(Duration.ofSeconds(2)).build()))
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(2)))
                .expectError(LockTimeoutException.class)
                .verify(TIMEOUT);
        lease.release().block(TIMEOUT);

        var failed = registry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("outcome", "failed").timer();
        assertThat(failed.count()).isEqualTo(1);
        assertThat(failed.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(2000.0);
    }

    @Test
    void aLostLeaseCountsALossAndEndsTheHoldTimerAsLost() {
        FaultInjectingBackend backend = FaultInjectingBackend.wrap(new LocalLockBackend(store)).failRenewals(true);
        LockClient locks = client(backend, new MicrometerLockListener(registry, "local"));
        LockOptions shortLease = options.mutate().leaseTime(Duration.ofSeconds(3)).build();

        StepVerifier.create(locks.hold("a", shortLease))
                .expectNextCount(1)
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(5)))
                .expectComplete()                     // the hold stream completes when the lease is lost
                .verify(TIMEOUT);

        assertThat(registry.get(MicrometerLockListener.LOSSES).tags("backend", "local").counter().count()).isEqualTo(1.0);
        assertThat(registry.get(MicrometerLockListener.HOLD).tags("end", "lost").timer().count()).isEqualTo(1);
        assertThat(registry.get(MicrometerLockListener.HOLD).tags("end", "released").timer().count()).isZero();
        assertThat(registry.get(MicrometerLockListener.RENEWALS).tags("outcome", "failed").counter().count()).isGreaterThanOrEqualTo(1.0);
        assertThat(registry.get(MicrometerLockListener.RENEWALS).tags("outcome", "ok").counter().count()).isZero();
    }

    @Test
    void lockNamesAreNotATagUnlessOptedIn() {
        LockClient locks = client(new LocalLockBackend(store), new MicrometerLockListener(registry, "local"));
        locks.withLock("order:1", l -> reactor.core.publisher.Mono.just(1)).block(TIMEOUT);
        locks.withLock("order:2", l -> reactor.core.publisher.Mono.just(2)).block(TIMEOUT);

        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag(MicrometerLockListener.LOCK_TAG)).isNull());
        assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("outcome", "acquired").timer().count()).isEqualTo(2);
    }

    @Test
    void anOptInNameTagFunctionTagsByItsBoundedValue() {
        MicrometerLockListener listener = new MicrometerLockListener(registry, "local",
                io.micrometer.core.instrument.Tags.of("app", "shop"), name -> name.substring(0, name.indexOf(':')));
        LockClient locks = client(new LocalLockBackend(store), listener);
        locks.withLock("order:1", l -> reactor.core.publisher.Mono.just(1)).block(TIMEOUT);
        locks.withLock("order:2", l -> reactor.core.publisher.Mono.just(2)).block(TIMEOUT);
        locks.withLock("account:7", l -> reactor.core.publisher.Mono.just(3)).block(TIMEOUT);

        assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT)
                .tags("app", "shop", "backend", "local", "lock", "order", "outcome", "acquired").timer().count()).isEqualTo(2);
        assertThat(registry.get(MicrometerLockListener.HOLD).tags("lock", "account", "end", "released").timer().count())
                .isEqualTo(1);
        assertThat(registry.getMeters().stream().map(Meter::getId).map(id -> id.getTag("lock")).distinct())
                .containsExactlyInAnyOrder("order", "account");
    }

    @Test
    void metersExistBeforeAnyActivityAndArgumentsAreChecked() {
        new MicrometerLockListener(registry, "redis");
        assertThat(registry.get(MicrometerLockListener.LOSSES).tags("backend", "redis").counter().count()).isZero();
        assertThat(registry.find(MicrometerLockListener.ACQUIRE_WAIT).timers()).hasSize(2);
        assertThatNullPointerException().isThrownBy(() -> new MicrometerLockListener(null, "x")).withMessage("registry");
        assertThatNullPointerException().isThrownBy(() -> new MicrometerLockListener(registry, null)).withMessage("backendName");
        assertThatNullPointerException().isThrownBy(() -> new MicrometerLockListener(registry, "x", null)).withMessage("tags");
    }

    /** A store session hands the listener out per concept: the same meters, tagged with each concept. */
    @Test
    void aSessionTagsEachConceptsMetersWithItsConcept() {
        io.reactivelocks.LockStore store = io.reactivelocks.local.LocalLocks.open();
        try {
            LockOptions withMeters = LockOptions.builder().listener(new MicrometerLockListener(registry, "local")).build();
            io.reactivelocks.semaphore.Semaphore permits = store.semaphores(withMeters);
            StepVerifier.create(permits.withPermit("pool", 2, lease -> reactor.core.publisher.Mono.just(lease.token())))
                    .expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(store.readWriteLocks(withMeters).read().acquire("doc").flatMap(Lease::release))
                    .expectComplete().verify(TIMEOUT);
            assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT)
                    .tags("concept", "semaphore", "outcome", "acquired").timer().count()).isEqualTo(1);
            assertThat(registry.get(MicrometerLockListener.HOLD)
                    .tags("concept", "semaphore", "end", "released").timer().count()).isEqualTo(1);
            assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT)
                    .tags("concept", "read_write_lock", "outcome", "acquired").timer().count()).isEqualTo(1);
            assertThat(registry.get(MicrometerLockListener.ACQUIRE_WAIT)
                    .tags("concept", "lock", "outcome", "acquired").timer().count()).as("no lock client was used").isZero();
        } finally {
            store.close().block(TIMEOUT);
        }
    }
}
