package io.reactivelocks.spi;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The waiter line's wake-ups for events whose owner the store could not say ({@link LockEvent.Released} and
 * {@link LockEvent.Acquired} allow a null owner): a release of an unknown owner makes a waiter that counts three
 * ahead of it ask at once (it may be its turn: never a missed wake-up), and neither event fails the wait; a
 * waiter told the holder and its place asks only when the releases make it head.
 */
class WaiterLineTest {

    @Test
    void aReleaseOfAnUnknownOwnerWakesAWaiterToAskAndAnUnknownGrantDoesNotFailIt() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();
        AtomicInteger asks = new AtomicInteger();
        GrantRequest request = new GrantRequest("n", "me", Duration.ofMinutes(10), true, LockClock.of(vts));
        WaiterLine line = new WaiterLine(r -> Mono.fromSupplier(() -> asks.incrementAndGet() == 1
                        ? new WaiterLine.StillQueued(600_000, 3)
                        : new Attempt.Granted(7, Duration.ofMinutes(10), 0L)),
                name -> events.asFlux(), (name, owner) -> Mono.just(true), vts);
        try {
            Attempt first = line.tryGrant(request).block(Duration.ofSeconds(5));
            assertThat(first).isInstanceOf(Attempt.Queued.class);
            StepVerifier.withVirtualTime(() -> ((Attempt.Queued) first).turn(), () -> vts, Long.MAX_VALUE)
                    .expectSubscription()
                    .then(() -> events.tryEmitNext(new LockEvent.Acquired("n", null, 6)))
                    .then(() -> assertThat(asks.get()).as("a grant to someone does not make it ask").isEqualTo(1))
                    .then(() -> events.tryEmitNext(new LockEvent.Released("n", null, false)))
                    .assertNext(a -> assertThat(a).isInstanceOf(Attempt.Granted.class))
                    .expectComplete()
                    .verify(Duration.ofSeconds(5));
            assertThat(asks.get()).as("asked once more, at the release, long before its 10-minute hint").isEqualTo(2);
        } finally {
            vts.dispose();
        }
    }

    @Test
    void aWaiterToldTheHolderAsksOnlyOnceItIsHead() {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();
        AtomicInteger asks = new AtomicInteger();
        GrantRequest request = new GrantRequest("n", "me", Duration.ofMinutes(10), true, LockClock.of(vts));
        WaiterLine line = new WaiterLine(r -> Mono.fromSupplier(() -> asks.incrementAndGet() == 1
                        ? new WaiterLine.StillQueued(600_000, 2, "h")
                        : new Attempt.Granted(9, Duration.ofMinutes(10), 0L)),
                name -> events.asFlux(), (name, owner) -> Mono.just(true), vts);
        try {
            Attempt first = line.tryGrant(request).block(Duration.ofSeconds(5));
            assertThat(first).isInstanceOf(Attempt.Queued.class);
            StepVerifier.withVirtualTime(() -> ((Attempt.Queued) first).turn(), () -> vts, Long.MAX_VALUE)
                    .expectSubscription()
                    .then(() -> events.tryEmitNext(new LockEvent.Acquired("n", "h", 5))) // the holder's grant, seen late
                    .then(() -> events.tryEmitNext(new LockEvent.Released("n", "h", false)))
                    .then(() -> events.tryEmitNext(new LockEvent.Acquired("n", "w1", 7)))
                    .then(() -> events.tryEmitNext(new LockEvent.Released("n", "w1", false)))
                    .then(() -> assertThat(asks.get()).as("the holder's grant and release moved nobody: one waiter is still ahead")
                            .isEqualTo(1))
                    .then(() -> events.tryEmitNext(new LockEvent.Acquired("n", "w2", 8)))
                    .then(() -> events.tryEmitNext(new LockEvent.Released("n", "w2", false)))
                    .assertNext(a -> assertThat(a).isInstanceOf(Attempt.Granted.class))
                    .expectComplete()
                    .verify(Duration.ofSeconds(5));
            assertThat(asks.get()).as("asked once more, when it was head").isEqualTo(2);
        } finally {
            vts.dispose();
        }
    }
}
