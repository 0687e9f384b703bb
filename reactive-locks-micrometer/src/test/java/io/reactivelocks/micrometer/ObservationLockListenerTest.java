package io.reactivelocks.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

/**
 * Observations of waits, holds and renewals from a real lock client over the in-memory store, in virtual time, into a
 * {@link TestObservationRegistry} (which also checks that every observation is started and stopped once); the
 * caller's observation is the parent.
 */
class ObservationLockListenerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    private final LocalLockStore store = new LocalLockStore(vts, LockClock.of(vts));
    private final TestObservationRegistry registry = TestObservationRegistry.create();
    private final LockOptions options = LockOptions.builder()
            .leaseTime(Duration.ofSeconds(30)).drift(0, Duration.ZERO).scheduler(vts).clock(LockClock.of(vts)).build();
    private LockClient locks;
    private LockClient other;

    @BeforeEach
    void setUp() {
        ObservationThreadLocalAccessor.getInstance().setObservationRegistry(registry);
        LockBackend backend = new LocalLockBackend(store);
        locks = LockClient.create(backend, options, ObservationLockListener.forBackend(registry, backend));
        other = LockClient.create(new LocalLockBackend(store), options);
    }

    @AfterEach
    void tearDown() {
        locks.close().block(TIMEOUT);
        other.close().block(TIMEOUT);
        vts.dispose();
    }

    @Test
    void theContextKeyIsMicrometersOwn() {
        assertThat(ObservationLockListener.OBSERVATION_CONTEXT_KEY).isEqualTo(ObservationThreadLocalAccessor.KEY);
    }

    @Test
    void waitAndHoldAreChildrenOfTheCallersObservationAndRenewalsChildrenOfTheHold() {
        Observation caller = Observation.start("caller", registry);
        StepVerifier.create(locks.withLock("order:1", lease -> Mono.delay(Duration.ofSeconds(11), vts).thenReturn(lease.token()))
                        .contextWrite(Context.of(ObservationThreadLocalAccessor.KEY, caller)))
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(11))) // one renewal, at lease/3
                .expectNextCount(1)
                .expectComplete()
                .verify(TIMEOUT);
        caller.stop();

        assertThat(registry)
                .hasNumberOfObservationsWithNameEqualTo(ObservationLockListener.WAIT, 1)
                .hasNumberOfObservationsWithNameEqualTo(ObservationLockListener.HOLD, 1)
                .hasNumberOfObservationsWithNameEqualTo(ObservationLockListener.RENEWAL, 1)
                .hasObservationWithNameEqualTo(ObservationLockListener.WAIT).that()
                .hasBeenStarted().hasBeenStopped()
                .hasParentObservationEqualTo(caller)
                .hasLowCardinalityKeyValue("backend", "local")
                .hasLowCardinalityKeyValue("outcome", "acquired")
                .hasHighCardinalityKeyValue("lock.name", "order:1");
        assertThat(registry).hasObservationWithNameEqualTo(ObservationLockListener.HOLD).that()
                .hasBeenStopped()
                .hasParentObservationEqualTo(caller)
                .hasLowCardinalityKeyValue("outcome", "released")
                .hasHighCardinalityKeyValue("lock.name", "order:1")
                .hasHighCardinalityKeyValueWithKey("lock.token");
        assertThat(registry).hasObservationWithNameEqualTo(ObservationLockListener.RENEWAL).that()
                .hasBeenStopped()
                .hasLowCardinalityKeyValue("outcome", "ok")
                .hasParentObservationContextMatching(parent -> ObservationLockListener.HOLD.equals(parent.getName()));
    }

    @Test
    void contextCaptureKeepsTheObservationInScopeOnTheCallersThread() {
        Observation caller = Observation.start("caller", registry);
        Lease lease;
        try (Observation.Scope scope = caller.openScope()) {
            // captured into the Reactor context on this thread; the acquire is subscribed on another, without the scope
            lease = locks.acquire("order:2").subscribeOn(Schedulers.parallel()).contextCapture().block(TIMEOUT);
        }
        lease.release().block(TIMEOUT);
        caller.stop();
        assertThat(registry).hasObservationWithNameEqualTo(ObservationLockListener.WAIT).that()
                .hasParentObservationEqualTo(caller);
        assertThat(registry).hasObservationWithNameEqualTo(ObservationLockListener.HOLD).that()
                .hasParentObservationEqualTo(caller).hasLowCardinalityKeyValue("outcome", "released");
    }

    @Test
    void withoutAnObservationInContextTheThreadsCurrentOneIsTheParentAndWithoutEitherThereIsNone() {
        Observation caller = Observation.start("caller", registry);
        try (Observation.Scope scope = caller.openScope()) {
            locks.tryAcquire("order:3").flatMap(Lease::release).block(TIMEOUT);
        }
        caller.stop();
        locks.tryAcquire("order:4").flatMap(Lease::release).block(TIMEOUT);
        assertThat(registry).hasAnObservation(o -> o.hasNameEqualTo(ObservationLockListener.WAIT)
                .hasHighCardinalityKeyValue("lock.name", "order:3").hasParentObservationEqualTo(caller));
        assertThat(registry).hasAnObservation(o -> o.hasNameEqualTo(ObservationLockListener.WAIT)
                .hasHighCardinalityKeyValue("lock.name", "order:4").doesNotHaveParentObservation());
    }

    @Test
    void contentionFailureAndCancelEndTheWaitWithTheirOutcome() {
        Lease held = other.acquire("busy").block(TIMEOUT);
        assertThat(locks.tryAcquire("busy").blockOptional(TIMEOUT)).isEmpty();
        StepVerifier.create(locks.acquire("busy", options.mutate().waitTimeout(Duration.ofSeconds(2)).build()))
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(2)))
                .expectError(LockTimeoutException.class)
                .verify(TIMEOUT);
        Disposable waiting = locks.acquire("busy").subscribe();
        vts.advanceTimeBy(Duration.ofSeconds(1));
        waiting.dispose();
        held.release().block(TIMEOUT);

        assertThat(registry)
                .hasNumberOfObservationsWithNameEqualTo(ObservationLockListener.WAIT, 3)
                .hasNumberOfObservationsWithNameEqualTo(ObservationLockListener.HOLD, 0)
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "contended").doesNotHaveError())
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "failed").hasError())
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("outcome", "cancelled").doesNotHaveError());
    }

    @Test
    void aFailedRenewalAndTheLossAreRecorded() {
        FaultInjectingBackend backend = FaultInjectingBackend.wrap(new LocalLockBackend(store)).failRenewals(true);
        LockClient failing = LockClient.create(backend, options, new ObservationLockListener(registry, "faulty"));
        try {
            Lease lease = failing.acquire("fragile").block(TIMEOUT);
            vts.advanceTimeBy(Duration.ofSeconds(31));
            assertThat(lease.isValid()).isFalse();
        } finally {
            failing.close().block(TIMEOUT);
        }
        assertThat(registry)
                .hasAnObservation(o -> o.hasNameEqualTo(ObservationLockListener.RENEWAL)
                        .hasLowCardinalityKeyValue("outcome", "failed").hasLowCardinalityKeyValue("backend", "faulty").hasError())
                .hasObservationWithNameEqualTo(ObservationLockListener.HOLD).that()
                .hasBeenStopped().hasLowCardinalityKeyValue("outcome", "lost");
    }
}
