package io.reactivelocks.safety.badinput;

import static io.reactivelocks.safety.badinput.BadInput.STEP;
import static io.reactivelocks.safety.badinput.BadInput.assertFree;
import static io.reactivelocks.safety.badinput.BadInput.errorsWithin;
import static io.reactivelocks.safety.badinput.BadInput.rejectedAtCall;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.reactivelocks.Lease;
import io.reactivelocks.LockClient;
import io.reactivelocks.LockClientClosedException;
import io.reactivelocks.LockListener;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockTimeoutException;
import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * Bad input to the public API of {@code reactive-locks-core} ({@link LockClient}, {@link LockOptions},
 * {@link Lease}), on the in-memory backend: the checks live in the engine, so every backend gets
 * the same answers (the backend classes of this package show the store-specific ones).
 */
class ApiBadInputTest {

    private static final Duration QUICK = Duration.ofSeconds(1);

    private LocalLockStore store;
    private LockClient locks;
    private LockClient other;

    @BeforeEach
    void clients() {
        store = new LocalLockStore();
        locks = LocalLockBackend.client(store, LockOptions.defaults());
        other = LocalLockBackend.client(store, LockOptions.defaults());
    }

    @AfterEach
    void closeClients() {
        BadInput.close(locks);
        BadInput.close(other);
    }

    private static final Function<Lease, Mono<String>> BODY = lease -> Mono.just("done");
    private static final Function<Lease, Publisher<String>> BODY_MANY = lease -> Flux.just("done");

    /** Every method that takes a name, called with {@code name}. */
    private List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> everyNamedCall(String name) {
        LockOptions o = LockOptions.defaults();
        return List.of(
                () -> locks.acquire(name), () -> locks.acquire(name, o),
                () -> locks.tryAcquire(name), () -> locks.tryAcquire(name, o),
                () -> locks.hold(name), () -> locks.hold(name, o),
                () -> locks.withLock(name, BODY), () -> locks.withLock(name, o, BODY),
                () -> locks.withLockMany(name, BODY_MANY), () -> locks.withLockMany(name, o, BODY_MANY),
                () -> locks.observe(name), () -> locks.inspect(name), () -> locks.awaitRelease(name));
    }

    // ------------------------------------------------------------------ names

    @Test
    void nullNameIsRejectedAtCallByEveryMethod() {
        for (var call : everyNamedCall(null)) {
            rejectedAtCall(NullPointerException.class, call, "name");
        }
    }

    @Test
    void emptyNameIsRejectedAtCallByEveryMethod() {
        for (var call : everyNamedCall("")) {
            rejectedAtCall(IllegalArgumentException.class, call, "name must not be empty");
        }
    }

    @Test
    void oversizedNameIsRejectedAtCallCountingUtf8Bytes() {
        for (var call : everyNamedCall("x".repeat(1025))) {
            rejectedAtCall(IllegalArgumentException.class, call, "name must be at most 1024 UTF-8 bytes", "was 1025");
        }
        // 342 characters, but 1026 bytes: the limit is in UTF-8 bytes, not chars
        rejectedAtCall(IllegalArgumentException.class, () -> locks.acquire("€".repeat(342)),
                "name must be at most 1024 UTF-8 bytes", "was 1026");
        // an emoji is one code point, two chars, four bytes
        rejectedAtCall(IllegalArgumentException.class, () -> locks.acquire("\uD83D\uDD12".repeat(257)), "was 1028");
        // a lone surrogate counts three bytes (its generalized UTF-8 form)
        rejectedAtCall(IllegalArgumentException.class, () -> locks.acquire("\uD800".repeat(342)), "was 1026");
        // exactly at the limit is fine
        String atLimit = "x".repeat(1024);
        StepVerifier.create(locks.withLock(atLimit, lease -> Mono.just(lease.name())))
                .expectNext(atLimit).expectComplete().verify(STEP);
    }

    // ------------------------------------------------------------------ options

    @Test
    void nullOptionsAreRejectedAtCall() {
        rejectedAtCall(NullPointerException.class, () -> locks.acquire("a", null), "options");
        rejectedAtCall(NullPointerException.class, () -> locks.tryAcquire("a", null), "options");
        rejectedAtCall(NullPointerException.class, () -> locks.hold("a", null), "options");
        rejectedAtCall(NullPointerException.class, () -> locks.withLock("a", null, BODY), "options");
        rejectedAtCall(NullPointerException.class, () -> locks.withLockMany("a", null, BODY_MANY), "options");
    }

    @Test
    void nullBackendDefaultsOrListenerAreRejectedByTheFactory() {
        LocalLockBackend backend = new LocalLockBackend(store);
        rejectedAtCall(NullPointerException.class, () -> LockClient.create(null), "backend");
        rejectedAtCall(NullPointerException.class, () -> LockClient.create(backend, null), "defaults");
        rejectedAtCall(NullPointerException.class, () -> LockClient.create(backend, LockOptions.defaults(), null), "listener");
        rejectedAtCall(NullPointerException.class, () -> new LocalLockBackend(null), "store");
    }

    @Test
    void zeroNegativeOrNullLeaseTimeIsRejectedByTheBuilder() {
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(Duration.ZERO),
                "leaseTime must be positive", "PT0S");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(Duration.ofSeconds(-1)),
                "leaseTime must be positive", "PT-1S");
        rejectedAtCall(NullPointerException.class, () -> LockOptions.builder().leaseTime(null), "leaseTime");
    }

    @Test
    void hugeDurationsAreRejectedByTheBuilderNotByAnOverflowLater() {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        Duration justOver = LockOptions.MAX_DURATION.plusNanos(1);
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(forever),
                "leaseTime must be at most", "36500 days");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(justOver),
                "leaseTime must be at most");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().waitTimeout(forever),
                "waitTimeout must be at most");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().requestTimeout(forever),
                "requestTimeout must be at most");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().renewalInterval(forever),
                "renewalInterval must be at most");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().drift(0.01, forever),
                "driftConstant must be at most");
        rejectedAtCall(IllegalArgumentException.class,
                () -> LockOptions.builder().backoff(Retry.backoff(3, forever)), "backoff.minBackoff must be at most");
        // the longest accepted lease and wait work, without overflowing a deadline
        LockOptions longest = LockOptions.builder().leaseTime(LockOptions.MAX_DURATION)
                .waitTimeout(LockOptions.MAX_DURATION).build();
        StepVerifier.create(locks.withLock("longest", longest, lease -> Mono.just(lease.isValid() && lease.remaining()
                        .compareTo(Duration.ofDays(365)) > 0)))
                .expectNext(true).expectComplete().verify(STEP);
    }

    @Test
    void renewalIntervalNotShorterThanTheLeaseIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(Duration.ofSeconds(3))
                        .renewalInterval(Duration.ofSeconds(3)).build(),
                "renewalInterval must be shorter than leaseTime", "PT3S >= PT3S");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(Duration.ofSeconds(3))
                .renewalInterval(Duration.ofSeconds(10)).build(), "renewalInterval must be shorter than leaseTime");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().renewalInterval(Duration.ZERO),
                "renewalInterval must be positive");
        // the drift allowance must leave time after the renewal interval
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().leaseTime(Duration.ofMillis(10))
                .renewalInterval(Duration.ofMillis(9)).build(), "leaseTime PT0.01S minus the drift allowance");
    }

    @Test
    void zeroOrNegativeWaitTimeoutIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().waitTimeout(Duration.ofMillis(-5)),
                "waitTimeout must be positive", "PT-0.005S");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().waitTimeout(Duration.ZERO),
                "waitTimeout must be positive");
        // null is accepted: it means "wait until cancelled"
        assertThat(LockOptions.builder().waitTimeout(null).build().waitTimeout()).isNull();
    }

    @Test
    void zeroNegativeOrNullRequestTimeoutIsRejected() {
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().requestTimeout(Duration.ZERO),
                "requestTimeout must be positive", "PT0S");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().requestTimeout(Duration.ofNanos(-1)),
                "requestTimeout must be positive");
        rejectedAtCall(NullPointerException.class, () -> LockOptions.builder().requestTimeout(null), "requestTimeout");
    }

    @Test
    void nullOrInconsistentBackoffIsRejected() {
        rejectedAtCall(NullPointerException.class, () -> LockOptions.builder().backoff(null), "backoff");
        rejectedAtCall(IllegalArgumentException.class,
                () -> LockOptions.builder().backoff(Retry.backoff(3, Duration.ZERO)), "backoff.minBackoff must be positive");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder()
                        .backoff(Retry.backoff(3, Duration.ofSeconds(2)).maxBackoff(Duration.ofSeconds(1))),
                "backoff.maxBackoff must be >= backoff.minBackoff");
        rejectedAtCall(IllegalArgumentException.class,
                () -> LockOptions.builder().backoff(Retry.backoff(0, Duration.ofMillis(10))), "backoff.maxAttempts must be >= 1");
    }

    @Test
    void reactorsUncappedBackoffIsAcceptedAndCappedNotAnOverflowOnFirstContention() {
        // Retry.backoff(n, min) without maxBackoff means "no cap" (Duration.ofMillis(Long.MAX_VALUE)), which
        // overflowed a nanosecond conversion on the first contended attempt
        LockOptions uncapped = LockOptions.builder().backoff(Retry.backoff(3, Duration.ofMillis(5))).build();
        assertThat(uncapped.backoff().maxBackoff).isEqualTo(LockOptions.MAX_DURATION);
        Lease held = locks.acquire("contended").block(STEP);
        // attempt budget exhausted while the lock stays held: a timeout, not an arithmetic error
        LockTimeoutException e = errorsWithin(other.acquire("contended", uncapped), LockTimeoutException.class, STEP,
                "lock 'contended' was not acquired", "3 attempts");
        assertThat(e.lockName()).isEqualTo("contended");
        // and a wait timeout with the same backoff
        LockOptions waiting = uncapped.mutate().backoff(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(5)))
                .waitTimeout(Duration.ofMillis(300)).build();
        errorsWithin(other.acquire("contended", waiting), LockTimeoutException.class, Duration.ofMillis(300),
                "lock 'contended' was not acquired within PT0.3S");
        held.release().block(STEP);
        StepVerifier.create(other.withLock("contended", waiting, lease -> Mono.just(lease.token())))
                .expectNextCount(1).expectComplete().verify(STEP);
    }

    @Test
    void outOfRangeDriftIsRejected() {
        for (double f : new double[] {-0.1, 0.5, 1.0, Double.NaN, Double.POSITIVE_INFINITY}) {
            rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().drift(f, Duration.ZERO),
                    "drift factor must be in [0, 0.5)");
        }
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().drift(0.01, Duration.ofMillis(-1)),
                "driftConstant must not be negative");
        rejectedAtCall(NullPointerException.class, () -> LockOptions.builder().drift(0.01, null), "driftConstant");
    }

    @Test
    void disposedSchedulerOrNullClockIsRejected() {
        Scheduler disposed = Schedulers.newSingle("bad-input-disposed");
        disposed.dispose();
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().scheduler(disposed),
                "scheduler must support time-based scheduling");
        rejectedAtCall(IllegalArgumentException.class,
                () -> LockOptions.builder().scheduler(Schedulers.fromExecutor(Runnable::run)),
                "scheduler must support time-based scheduling");
        rejectedAtCall(NullPointerException.class, () -> LockOptions.builder().clock(null), "clock");
    }

    @Test
    void oversizedOrMalformedPayloadIsRejectedAtCallCountingUtf8Bytes() {
        String largest = "€".repeat(LockOptions.MAX_PAYLOAD_BYTES / 3) + "a"; // 4096 bytes in 1366 chars
        assertThat(LockOptions.builder().payload(largest).build().payload()).isEqualTo(largest);
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.builder().payload(largest + "a"),
                "payload must be at most 4096 UTF-8 bytes", "was 4097");
        rejectedAtCall(IllegalArgumentException.class, () -> LockOptions.defaults().withPayload("a\uD800b"),
                "payload must be well-formed UTF-16");
        Lease lease = locks.acquire("payload").block(STEP);
        try {
            rejectedAtCall(IllegalArgumentException.class, () -> lease.updatePayload("x".repeat(4097)),
                    "payload must be at most 4096 UTF-8 bytes");
            rejectedAtCall(IllegalArgumentException.class,
                    () -> io.reactivelocks.election.LeaderElection.create(locks).campaign("e", "\uDC00"),
                    "value must be well-formed UTF-16");
            rejectedAtCall(NullPointerException.class,
                    () -> io.reactivelocks.election.LeaderElection.create(locks).campaign("e", null), "value");
        } finally {
            lease.release().block(STEP);
        }
    }

    // ------------------------------------------------------------------ lifecycle

    @Test
    void everyOperationSubscribedAfterCloseFailsWithLockClientClosedException() {
        locks.close().block(STEP);
        // the call itself succeeds (arguments are fine); the subscription fails
        List<Publisher<?>> after = List.of(locks.acquire("late"), locks.tryAcquire("late"), locks.hold("late"),
                locks.withLock("late", BODY), locks.withLockMany("late", BODY_MANY),
                locks.observe("late"), locks.inspect("late"), locks.awaitRelease("late"));
        for (Publisher<?> p : after) {
            LockClientClosedException e = errorsWithin(p, LockClientClosedException.class, QUICK,
                    "lock client is closed", "lock 'late'");
            assertThat(e.lockName()).isEqualTo("late");
        }
        // closing again is fine
        StepVerifier.create(locks.close()).expectComplete().verify(STEP);
    }

    @Test
    void awaitReleaseInterruptedByCloseFailsInsteadOfReportingAFreeLock() {
        Lease held = other.acquire("busy").block(STEP);
        StepVerifier.create(locks.awaitRelease("busy"))
                .then(() -> locks.close().subscribe())
                .expectErrorSatisfies(e -> assertThat(e).isExactlyInstanceOf(LockClientClosedException.class)
                        .hasMessageContaining("lock 'busy'"))
                .verify(STEP);
        assertThat(held.isValid()).as("closing another client does not touch this lease").isTrue();
        held.release().block(STEP);
    }

    @Test
    void releasingALeaseTwiceIsANoOp() {
        Lease lease = locks.acquire("twice").block(STEP);
        StepVerifier.create(lease.release()).expectComplete().verify(STEP);
        StepVerifier.create(lease.release()).expectComplete().verify(STEP);
        assertThat(lease.isValid()).isFalse();
        // the second release did not remove someone else's grant
        Lease next = other.acquire("twice").block(STEP);
        StepVerifier.create(lease.release()).expectComplete().verify(STEP);
        assertThat(next.isValid()).isTrue();
        StepVerifier.create(locks.observe("twice").next())
                .assertNext(s -> assertThat(s.isHeld()).as("still held by the other client").isTrue())
                .expectComplete().verify(STEP);
        next.release().block(STEP);
    }

    @Test
    void releasingWithAnotherOwnersIdReleasesNothing() {
        LocalLockBackend backend = new LocalLockBackend(store);
        Lease lease = locks.acquire("owned").block(STEP);
        StepVerifier.create(backend.release("owned", "not-the-owner")).expectNext(false).expectComplete().verify(STEP);
        StepVerifier.create(backend.release("owned", io.reactivelocks.spi.GrantRequest.newOwner()))
                .expectNext(false).expectComplete().verify(STEP);
        assertThat(lease.isValid()).isTrue();
        StepVerifier.create(other.tryAcquire("owned")).expectComplete().verify(STEP); // empty: still held
        lease.release().block(STEP);
    }

    @Test
    void nullBodyIsRejectedAtCall() {
        rejectedAtCall(NullPointerException.class, () -> locks.withLock("a", null), "body");
        rejectedAtCall(NullPointerException.class, () -> locks.withLock("a", LockOptions.defaults(), null), "body");
        rejectedAtCall(NullPointerException.class, () -> locks.withLockMany("a", null), "body");
        rejectedAtCall(NullPointerException.class, () -> locks.withLockMany("a", LockOptions.defaults(), null), "body");
    }

    @Test
    void bodyReturningNullOrThrowingFailsAndReleasesTheLock() {
        errorsWithin(locks.withLock("body", lease -> null), NullPointerException.class, QUICK, "null");
        assertFree(other, "body");
        errorsWithin(locks.withLockMany("body", lease -> null), NullPointerException.class, QUICK, "null");
        assertFree(other, "body");
        errorsWithin(locks.withLock("body", lease -> {
            throw new IllegalStateException("body blew up");
        }), IllegalStateException.class, QUICK, "body blew up");
        assertFree(other, "body");
    }

    @Test
    void aListenerThatThrowsDoesNotBreakLocking() {
        LockListener throwing = new LockListener() {
            @Override
            public void onAcquired(String name, long token, Duration waited) {
                throw new IllegalStateException("listener blew up");
            }
        };
        LockClient listened = LockClient.create(new LocalLockBackend(store), LockOptions.defaults(), throwing);
        try {
            assertThatCode(() -> StepVerifier.create(listened.withLock("listened", lease -> Mono.just(1)))
                    .expectNext(1).expectComplete().verify(STEP)).doesNotThrowAnyException();
            assertFree(other, "listened");
        } finally {
            BadInput.close(listened);
        }
    }
}
