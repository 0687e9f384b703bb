package io.reactivelocks.docs;

import io.reactivelocks.LockStore;
import io.reactivelocks.local.LocalLocks;
import io.reactivelocks.semaphore.Semaphore;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import io.reactivelocks.micrometer.MicrometerLockListener;
import io.reactivelocks.micrometer.ObservationLockListener;
import io.reactivelocks.spi.LockBackend;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The samples of docs/operations.md about meters and observations, run on the in-memory store. */
class DocsMicrometerTest {

    static final Duration STEP = Duration.ofSeconds(10);

    @Test
    void metersAndObservations() {
        MeterRegistry meterRegistry = new SimpleMeterRegistry();
        TestObservationRegistry observationRegistry = TestObservationRegistry.create();
        // tag::listeners[]
        LockStore store = LocalLocks.open();                      // RedisLocks.connect(redis), PostgresLocks.connect(factory), ...
        LockOptions options = LockOptions.builder().listener(LockListener.composite(
                new MicrometerLockListener(meterRegistry, store.name()),          // reactive.locks.* meters, tagged backend, concept
                new ObservationLockListener(observationRegistry, store.name())))  // wait, hold and renewal observations
                .build();
        LockClient locks = store.locks(options);                   // store.semaphores(options), store.readWriteLocks(...) alike
        Semaphore permits = store.semaphores(options);             // its meters are tagged concept=semaphore
        // end::listeners[]
        StepVerifier.create(locks.withLock("order:42", lease -> Mono.just(lease.token()))).expectNextCount(1).expectComplete().verify(STEP);
        StepVerifier.create(permits.withPermit("pool", 3, lease -> Mono.just(lease.token()))).expectNextCount(1).expectComplete().verify(STEP);
        assertThat(meterRegistry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("concept", "lock", "outcome", "acquired").timer().count())
                .isEqualTo(1);
        assertThat(meterRegistry.get(MicrometerLockListener.ACQUIRE_WAIT).tags("concept", "semaphore", "outcome", "acquired").timer()
                .count()).isEqualTo(1);
        TestObservationRegistryAssert.assertThat(observationRegistry).hasObservationWithNameEqualTo(ObservationLockListener.HOLD);
        store.close().block(STEP);
    }

    @Test
    void lockNamesAsABoundedTag() {
        MeterRegistry registry = new SimpleMeterRegistry();
        // tag::name-tag[]
        MicrometerLockListener meters = new MicrometerLockListener(registry, "redis", Tags.of("app", "shop"),
                name -> name.substring(0, name.indexOf(':')));     // lock=order, lock=account: a small, bounded set
        // end::name-tag[]
        LockClient locks = LockClient.create(new LocalLockBackend(new LocalLockStore()), LockOptions.defaults(), meters);
        StepVerifier.create(locks.withLock("order:42", lease -> Mono.just(1))).expectNext(1).expectComplete().verify(STEP);
        assertThat(registry.get(MicrometerLockListener.HOLD).tag("lock", "order").tag("app", "shop").timer().count()).isEqualTo(1);
        locks.close().block(STEP);
    }
}
