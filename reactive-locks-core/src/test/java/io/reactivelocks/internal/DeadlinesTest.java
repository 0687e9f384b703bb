package io.reactivelocks.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The shared deadline structures of the engine (request timeouts, lease deadlines) and owner ids, on virtual time. */
class DeadlinesTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private VirtualTimeScheduler vts;
    private LockClock clock;

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        clock = LockClock.of(vts);
    }

    @AfterEach
    void tearDown() {
        vts.dispose();
    }

    // ---- request timeouts

    @Test
    void aRequestWithoutAnAnswerTimesOutAtItsOwnDeadlineAndIsCancelled() {
        RequestDeadlines deadlines = new RequestDeadlines(vts, clock);
        List<Boolean> cancelled = new ArrayList<>();
        Mono<String> never = Mono.<String>never().doOnCancel(() -> cancelled.add(true));
        List<Throwable> errors = new ArrayList<>();
        deadlines.within(never, Duration.ofSeconds(2)).subscribe(v -> { }, errors::add);
        vts.advanceTimeBy(Duration.ofMillis(500));
        deadlines.within(Mono.<String>never(), Duration.ofSeconds(2)).subscribe(v -> { }, errors::add);

        vts.advanceTimeBy(Duration.ofMillis(1499));
        assertThat(errors).isEmpty();
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(errors).hasSize(1).first().isInstanceOf(TimeoutException.class);
        assertThat(cancelled).containsExactly(true);
        vts.advanceTimeBy(Duration.ofMillis(499));
        assertThat(errors).hasSize(1);
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(errors).hasSize(2);
    }

    @Test
    void anAnswerBeforeTheDeadlineWinsAndLeavesNoTimeoutBehind() {
        RequestDeadlines deadlines = new RequestDeadlines(vts, clock);
        Sinks.One<String> answer = Sinks.one();
        StepVerifier.withVirtualTime(() -> deadlines.within(answer.asMono(), Duration.ofSeconds(1)), () -> vts, 1)
                .expectSubscription()
                .then(() -> vts.advanceTimeBy(Duration.ofMillis(900)))
                .then(() -> answer.tryEmitValue("granted"))
                .expectNext("granted")
                .expectComplete()
                .verify(VERIFY);
        vts.advanceTimeBy(Duration.ofSeconds(5)); // the timer finds the entry done: nothing happens
    }

    @Test
    void timeoutsOfDifferentLengthsEachFireOnTime() {
        RequestDeadlines deadlines = new RequestDeadlines(vts, clock);
        List<String> fired = new ArrayList<>();
        deadlines.within(Mono.never(), Duration.ofSeconds(5)).subscribe(v -> { }, e -> fired.add("5s"));
        deadlines.within(Mono.never(), Duration.ofSeconds(1)).subscribe(v -> { }, e -> fired.add("1s"));
        vts.advanceTimeBy(Duration.ofSeconds(1));
        assertThat(fired).containsExactly("1s");
        vts.advanceTimeBy(Duration.ofSeconds(4));
        assertThat(fired).containsExactly("1s", "5s");
    }

    @Test
    void closeCancelsTheTimer() {
        RequestDeadlines deadlines = new RequestDeadlines(vts, clock);
        List<Throwable> errors = new ArrayList<>();
        deadlines.within(Mono.never(), Duration.ofSeconds(1)).subscribe(v -> { }, errors::add);
        deadlines.close();
        vts.advanceTimeBy(Duration.ofSeconds(2));
        assertThat(errors).isEmpty();
    }

    // ---- lease deadlines

    private static final class Expiring extends DeadlineHeap.Node {
        final String name;
        final List<String> log;

        Expiring(String name, List<String> log) {
            this.name = name;
            this.log = log;
        }

        @Override
        void onDeadline() {
            log.add(name);
        }

        @Override
        void onUnwatched() {
            log.add(name + " unwatched");
        }
    }

    @Test
    void deadlinesFireInOrderAndAMovedOrRemovedDeadlineActsAccordingly() {
        DeadlineHeap heap = new DeadlineHeap(vts, clock);
        List<String> log = new ArrayList<>();
        Expiring a = new Expiring("a", log);
        Expiring b = new Expiring("b", log);
        Expiring c = new Expiring("c", log);
        long now = clock.nanoTime();
        heap.set(a, now + Duration.ofSeconds(3).toNanos());
        heap.set(b, now + Duration.ofSeconds(1).toNanos());
        heap.set(c, now + Duration.ofSeconds(2).toNanos());
        heap.set(b, now + Duration.ofSeconds(4).toNanos()); // renewed: moved later
        heap.remove(c); // released

        vts.advanceTimeBy(Duration.ofMillis(2999));
        assertThat(log).isEmpty();
        vts.advanceTimeBy(Duration.ofMillis(1));
        assertThat(log).containsExactly("a");
        heap.set(c, clock.nanoTime() + Duration.ofMillis(500).toNanos()); // earlier than b: a timer of its own
        vts.advanceTimeBy(Duration.ofMillis(500));
        assertThat(log).containsExactly("a", "c");
        vts.advanceTimeBy(Duration.ofMillis(500));
        assertThat(log).containsExactly("a", "c", "b");
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(log).containsExactly("a", "c", "b");
    }

    @Test
    void manyDeadlinesKeepTheHeapOrder() {
        DeadlineHeap heap = new DeadlineHeap(vts, clock);
        List<String> log = new ArrayList<>();
        Random random = new Random(42);
        List<Expiring> nodes = new ArrayList<>();
        long now = clock.nanoTime();
        for (int i = 0; i < 500; i++) {
            Expiring n = new Expiring(String.valueOf(i), log);
            nodes.add(n);
            heap.set(n, now + Duration.ofMillis(1 + random.nextInt(10_000)).toNanos());
        }
        for (int i = 0; i < 500; i += 3) {
            heap.remove(nodes.get(i));
        }
        for (int i = 1; i < 500; i += 3) {
            heap.set(nodes.get(i), now + Duration.ofMillis(10_000 + i).toNanos()); // moved to the end, in index order
        }
        vts.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(log).doesNotContain("0", "3", "1", "4");
        vts.advanceTimeBy(Duration.ofSeconds(1));
        List<String> moved = new ArrayList<>();
        for (int i = 1; i < 500; i += 3) {
            moved.add(String.valueOf(i));
        }
        assertThat(log).hasSize(500 - 167).endsWith(moved.toArray(String[]::new));
    }

    @Test
    void closeCancelsTheLeaseTimer() {
        DeadlineHeap heap = new DeadlineHeap(vts, clock);
        List<String> log = new ArrayList<>();
        heap.set(new Expiring("a", log), clock.nanoTime() + Duration.ofSeconds(1).toNanos());
        heap.close();
        vts.advanceTimeBy(Duration.ofSeconds(2));
        assertThat(log).isEmpty();
    }
}
