package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockException;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import io.reactivelocks.spi.Attempt;
import io.reactivelocks.spi.RenewOutcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.util.RaceTestUtils;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

/**
 * {@code withLock} as one operator ({@link WithLock}): the order of its signals, release on every
 * end, the in-flight rules of a cancel, the lease's loss and reentrancy through the Context — on a
 * scripted store and virtual time.
 */
class WithLockTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private ScriptedBackend backend;
    private LockClient client;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        backend = new ScriptedBackend();
        LockOptions options = LockOptions.builder()
                .leaseTime(Duration.ofSeconds(30))
                .scheduler(vts)
                .clock(LockClock.of(vts))
                .build();
        client = LockClient.create(backend, options);
    }

    @AfterEach
    void tearDown() {
        client.close().block(VERIFY);
        vts.dispose();
    }

    private void assertNothingHeld() {
        assertThat(client.metrics().heldLeaseCount()).isZero();
        assertThat(client.metrics().pendingAcquireCount()).isZero();
    }

    @Test
    void theValueIsPassedOnOnlyOnceTheReleaseIsAnsweredAndOnlyWhenAskedFor() {
        Sinks.One<Boolean> releaseAnswer = Sinks.one();
        backend.onRelease = owner -> releaseAnswer.asMono();
        StepVerifier.withVirtualTime(() -> client.withLock("a", lease -> Mono.just(lease.token())), () -> vts, 0)
                .expectSubscription()
                .then(() -> assertThat(backend.releasedOwners).as("the body ended: release sent").hasSize(1))
                .expectNoEvent(Duration.ofMillis(10))
                .then(() -> releaseAnswer.tryEmitValue(true))
                .expectNoEvent(Duration.ofMillis(10)) // released, but nothing asked for yet
                .thenRequest(1)
                .expectNext(1L)
                .expectComplete()
                .verify(VERIFY);
        assertNothingHeld();
    }

    @Test
    void aFailedReleaseAfterAFailedBodyKeepsTheBodysErrorWithTheReleaseErrorInIt() {
        backend.onRelease = owner -> Mono.error(new java.io.IOException("connection reset"));
        IllegalStateException boom = new IllegalStateException("boom");
        StepVerifier.create(client.withLock("a", lease -> Mono.error(boom)))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isSameAs(boom);
                    assertThat(e.getSuppressed()).singleElement().isInstanceOf(LockException.class)
                            .satisfies(r -> assertThat(((LockException) r).lockName()).isEqualTo("a"));
                })
                .verify(VERIFY);
        assertNothingHeld();
    }

    @Test
    void aBodyThatThrowsOrReturnsNullFailsAndTheLeaseIsReleased() {
        StepVerifier.create(client.withLock("a", lease -> {
                    throw new IllegalArgumentException("bad body");
                }))
                .expectErrorMessage("bad body")
                .verify(VERIFY);
        StepVerifier.create(client.withLock("b", lease -> null))
                .expectError(NullPointerException.class)
                .verify(VERIFY);
        assertThat(backend.releasedOwners).hasSize(2);
        assertNothingHeld();
    }

    @Test
    void scalarAndDeferredBodiesEndTheSameWay() {
        // Mono.just / Mono.empty / Mono.error are read without a subscription; the others are subscribed
        StepVerifier.create(client.withLock("a", lease -> Mono.empty())).expectComplete().verify(VERIFY);
        StepVerifier.create(client.withLock("b", lease -> Mono.fromSupplier(() -> null))).expectComplete().verify(VERIFY);
        StepVerifier.create(client.withLock("c", lease -> Mono.fromCallable(lease::token))).expectNext(3L).expectComplete()
                .verify(VERIFY);
        StepVerifier.create(client.withLock("d", lease -> Mono.fromCallable(() -> {
                    throw new IllegalStateException("deferred boom");
                })))
                .expectErrorMessage("deferred boom")
                .verify(VERIFY);
        assertThat(backend.releasedOwners).hasSize(4);
        assertNothingHeld();
    }

    @Test
    void aCancelWhileAcquiringRunsNoBodyAndReleasesTheGrantThatArrivesAfterIt() {
        Sinks.One<Attempt> answer = Sinks.one();
        backend.onGrant = r -> answer.asMono();
        AtomicInteger bodies = new AtomicInteger();
        Disposable d = client.withLock("a", lease -> Mono.fromRunnable(bodies::incrementAndGet)).subscribe();
        assertThat(backend.grants).hasSize(1);
        d.dispose();
        assertThat(backend.releasedOwners).as("nothing released while the request is in flight").isEmpty();
        answer.tryEmitValue(Attempt.granted(1, Duration.ofSeconds(30)));
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
        assertThat(bodies).hasValue(0);
        assertNothingHeld();
    }

    @Test
    void aCancelRacingTheGrantOrTheBodysEndLeavesNothingHeldAndReleasesOnce() {
        for (int i = 0; i < 200; i++) {
            Sinks.One<Attempt> answer = Sinks.one();
            backend.onGrant = r -> answer.asMono();
            int released = backend.releasedOwners.size();
            Disposable d = client.withLock("g" + i, lease -> Mono.never()).subscribe();
            RaceTestUtils.race(d::dispose, () -> answer.tryEmitValue(Attempt.granted(1, Duration.ofSeconds(30))));
            assertThat(backend.releasedOwners).as("round %d: the grant given back once", i).hasSize(released + 1);
            assertNothingHeld();
        }
        backend.onGrant = r -> Mono.just(Attempt.granted(1, r.leaseTime()));
        for (int i = 0; i < 200; i++) {
            Sinks.One<Integer> body = Sinks.one();
            int released = backend.releasedOwners.size();
            Disposable d = client.withLock("b" + i, lease -> body.asMono()).subscribe();
            int value = i;
            RaceTestUtils.race(d::dispose, () -> body.tryEmitValue(value));
            assertThat(backend.releasedOwners).as("round %d: released once", i).hasSize(released + 1);
            assertNothingHeld();
        }
    }

    @Test
    void aCancelWhileTheBodyRunsCancelsItAndReleasesTheLease() {
        AtomicInteger cancelled = new AtomicInteger();
        Disposable d = client.withLock("a", lease -> Mono.never().doOnCancel(cancelled::incrementAndGet)).subscribe();
        assertThat(client.metrics().heldLeaseCount()).isOne();
        d.dispose();
        assertThat(cancelled).hasValue(1);
        assertThat(backend.releasedOwners).containsExactly(backend.grants.get(0).owner());
        assertNothingHeld();
    }

    @Test
    void aLostLeaseCancelsTheBodyWithLockLostException() {
        backend.onRenew = b -> Mono.just(b.stream().map(r -> RenewOutcome.notHeld()).toList());
        AtomicInteger cancelled = new AtomicInteger();
        StepVerifier.withVirtualTime(() -> client.withLock("a", lease -> Mono.never().doOnCancel(cancelled::incrementAndGet)),
                        () -> vts, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(Duration.ofSeconds(10)) // the first renewal: the store says it is not ours
                .expectError(LockLostException.class)
                .verify(VERIFY);
        assertThat(cancelled).hasValue(1);
        assertNothingHeld();
    }

    @Test
    void nestedWithLocksReenterTheirNamesThroughTheContextAcrossOtherNames() {
        Mono<List<Long>> nested = client.withLock("a", a ->
                client.withLock("b", b ->
                        client.withLockMany("a", a2 -> client.withLock("b", b2 ->
                                        Mono.just(List.of(a.token(), b.token(), a2.token(), b2.token()))))
                                .next()));
        StepVerifier.create(nested.contextWrite(Context.of("caller", "kept")))
                .assertNext(tokens -> {
                    assertThat(tokens.get(2)).as("a reentered").isEqualTo(tokens.get(0));
                    assertThat(tokens.get(3)).as("b reentered").isEqualTo(tokens.get(1));
                    assertThat(tokens.get(0)).isNotEqualTo(tokens.get(1));
                })
                .expectComplete()
                .verify(VERIFY);
        assertThat(backend.grants).as("one grant per name").hasSize(2);
        assertThat(backend.releasedOwners).hasSize(2);
        assertNothingHeld();
    }

    @Test
    void theBodySeesTheCallersContextAndEachSubscriptionAcquiresAgain() {
        Mono<String> once = client.withLock("a", lease -> Mono.deferContextual(c -> Mono.just(c.get("caller"))));
        Flux<String> twice = Flux.concat(once, once).contextWrite(Context.of("caller", "kept"));
        StepVerifier.create(twice).expectNext("kept", "kept").expectComplete().verify(VERIFY);
        assertThat(backend.grants).hasSize(2);
        assertThat(backend.releasedOwners).hasSize(2);
        assertNothingHeld();
    }
}
