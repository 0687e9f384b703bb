package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.LockState;
import io.reactivelocks.spi.Holder;
import io.reactivelocks.spi.LockEvent;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** {@code observe}: sharing per name, expiry caught by the holder's TTL, changes from events. */
class ObserveVirtualTimeTest {

    private VirtualTimeScheduler vts;
    private ScriptedBackend backend;
    private LockClient client;
    private final AtomicInteger eventSubscriptions = new AtomicInteger();
    private final AtomicInteger inspections = new AtomicInteger();
    private final AtomicReference<Holder> holder = new AtomicReference<>();
    private final Sinks.Many<LockEvent> events = Sinks.many().multicast().directBestEffort();

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        backend = new ScriptedBackend();
        backend.events = events.asFlux().doOnSubscribe(s -> eventSubscriptions.incrementAndGet());
        backend.onInspect = n -> Mono.fromSupplier(() -> {
            inspections.incrementAndGet();
            return holder.get();
        });
        client = LockClient.create(backend, LockOptions.builder().scheduler(vts).clock(LockClock.of(vts)).build());
    }

    @AfterEach
    void tearDown() {
        client.close().block(Duration.ofSeconds(5));
        vts.dispose();
    }

    @Test
    void subscribersOfOneNameShareOneUpstreamAndExpiryIsSeenAtTheHoldersTtl() {
        holder.set(new Holder("x", 5, Duration.ofSeconds(10)));
        StepVerifier.withVirtualTime(() -> client.observe("a"), () -> vts, Long.MAX_VALUE)
                .assertNext(s -> assertThat(s).isEqualTo(new LockState.Held("a", "x", 5, TimeUnit.SECONDS.toNanos(10))))
                .then(() -> {
                    // a second observer joins: it gets the current state, and no second upstream is opened
                    StepVerifier.create(client.observe("a").take(1))
                            .assertNext(s -> assertThat(s.isHeld()).isTrue())
                            .expectComplete()
                            .verify(Duration.ofSeconds(5));
                    assertThat(eventSubscriptions).hasValue(1);
                })
                .then(() -> holder.set(null)) // the key expires in the store, and nobody tells
                .expectNoEvent(Duration.ofSeconds(10))
                .thenAwait(Duration.ofMillis(1))
                .assertNext(s -> assertThat(s).isEqualTo(new LockState.Free("a")))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
        assertThat(inspections).hasValue(2);
    }

    @Test
    void changesOfHolderAreEmittedOnceAndRenewalsAreNotChanges() {
        holder.set(null);
        StepVerifier.withVirtualTime(() -> client.observe("a"), () -> vts, Long.MAX_VALUE)
                .assertNext(s -> assertThat(s.isHeld()).isFalse())
                .then(() -> {
                    holder.set(new Holder("x", 5, Duration.ofSeconds(30)));
                    events.tryEmitNext(new LockEvent.Acquired("a", "x", 5));
                })
                .assertNext(s -> assertThat(((LockState.Held) s).token()).isEqualTo(5))
                .then(() -> {
                    // renewed: same holder, new TTL; the TTL timer re-reads and finds no change
                    holder.set(new Holder("x", 5, Duration.ofSeconds(30)));
                })
                .expectNoEvent(Duration.ofSeconds(45))
                .then(() -> {
                    holder.set(new Holder("y", 6, Duration.ofSeconds(30)));
                    events.tryEmitNext(new LockEvent.Released("a", "x", false));
                    events.tryEmitNext(new LockEvent.Acquired("a", "y", 6));
                })
                .assertNext(s -> assertThat(((LockState.Held) s).owner()).isEqualTo("y"))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
    }

    /**
     * A store whose waiters' stream leaves grants out (PostgreSQL announces a grant only while someone observes): an
     * observer and a waiter of one name get a subscription each, the waiter's from {@code wakeUps}; a store that does
     * not tell them apart serves both with one.
     */
    @Test
    void aStoreThatLeavesGrantsOutOfWakeUpsGetsTheObserversSubscriptionApart() {
        AtomicInteger wakeUpSubscriptions = new AtomicInteger();
        Sinks.Many<LockEvent> wakeUps = Sinks.many().multicast().directBestEffort();
        backend.wakeUps = wakeUps.asFlux().doOnSubscribe(s -> wakeUpSubscriptions.incrementAndGet());
        backend.omitGrants = true;
        LockClient apart = LockClient.create(backend, LockOptions.builder().scheduler(vts).clock(LockClock.of(vts))
                .backoff(reactor.util.retry.Retry.backoff(Long.MAX_VALUE, Duration.ofMinutes(10)).jitter(0)).build());
        try {
            holder.set(new Holder("x", 5, Duration.ofSeconds(30)));
            Disposable observing = apart.observe("a").subscribe();
            assertThat(eventSubscriptions).hasValue(1);
            assertThat(wakeUpSubscriptions).hasValue(0);
            backend.onGrant = r -> Mono.just(new io.reactivelocks.spi.Attempt.Busy(holder.get()));
            AtomicReference<io.reactivelocks.Lease> got = new AtomicReference<>();
            Disposable waiting = apart.acquire("a").subscribe(got::set);
            assertThat(wakeUpSubscriptions).as("the waiter listens on the store's wake-ups").hasValue(1);
            assertThat(eventSubscriptions).as("not on the observers' subscription").hasValue(1);
            wakeUps.tryEmitNext(new LockEvent.Subscribed("a"));
            backend.onGrant = r -> Mono.just(io.reactivelocks.spi.Attempt.granted(7, r.leaseTime()));
            wakeUps.tryEmitNext(new LockEvent.Released("a", "x", false));
            vts.advanceTime();
            assertThat(got.get()).as("woken by the release on its own stream").isNotNull();
            waiting.dispose();
            observing.dispose();
        } finally {
            apart.close().block(Duration.ofSeconds(5));
        }
        // the same two on a store that does not tell them apart: one subscription
        eventSubscriptions.set(0);
        backend.omitGrants = false;
        backend.wakeUps = null;
        LockClient shared = LockClient.create(backend, LockOptions.builder().scheduler(vts).clock(LockClock.of(vts)).build());
        try {
            backend.onGrant = r -> Mono.just(new io.reactivelocks.spi.Attempt.Busy(holder.get()));
            Disposable observing = shared.observe("b").subscribe();
            Disposable waiting = shared.acquire("b").subscribe();
            assertThat(eventSubscriptions).hasValue(1);
            waiting.dispose();
            observing.dispose();
        } finally {
            shared.close().block(Duration.ofSeconds(5));
        }
    }

    @Test
    void theLastObserverLeavingClosesTheUpstream() {
        Disposable a = client.observe("a").subscribe();
        Disposable b = client.observe("a").subscribe();
        assertThat(eventSubscriptions).hasValue(1);
        assertThat(events.currentSubscriberCount()).isEqualTo(1);
        a.dispose();
        assertThat(events.currentSubscriberCount()).isEqualTo(1);
        b.dispose();
        assertThat(events.currentSubscriberCount()).as("lingering").isEqualTo(1);
        vts.advanceTimeBy(NotificationHub.LINGER.minusMillis(1));
        Disposable c = client.observe("a").subscribe();
        assertThat(eventSubscriptions).as("an observer joining while it lingers reuses it").hasValue(1);
        c.dispose();
        vts.advanceTimeBy(NotificationHub.LINGER.minusMillis(1));
        assertThat(events.currentSubscriberCount()).as("lingering again, from the last leave").isEqualTo(1);
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(events.currentSubscriberCount()).as("closed a linger after the last observer left").isZero();
        client.observe("a").subscribe().dispose();
        assertThat(eventSubscriptions).as("a new upstream after the old one closed").hasValue(2);
    }

    @Test
    void closingTheClientEndsALingeringUpstreamAtOnce() {
        client.observe("a").subscribe().dispose();
        assertThat(events.currentSubscriberCount()).as("lingering").isEqualTo(1);
        client.close().block(Duration.ofSeconds(5));
        assertThat(events.currentSubscriberCount()).isZero();
    }
}
