package io.reactivelocks;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.local.LocalLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * {@link LockListener#forAcquire}: each acquire's events, and its lease's, go to the listener made for it from the
 * subscriber's context; a cancel before the grant is reported; a renewal's start comes before its confirmation.
 * On the in-memory store and virtual time.
 */
class LockListenerPerAcquireTest {

    private static final Duration VERIFY = Duration.ofSeconds(10);

    private final List<String> events = new CopyOnWriteArrayList<>();
    private VirtualTimeScheduler vts;
    private LockClient a;
    private LockClient b;

    /** Tags every event with the "trace" entry of the subscriber's context. */
    private final LockListener tracing = new LockListener() {
        @Override
        public LockListener forAcquire(String name, ContextView context) {
            String trace = context.getOrDefault("trace", "none");
            events.add(trace + " started " + name);
            return new Scoped(trace);
        }

        @Override
        public void onAcquired(String name, long token, Duration waited) {
            events.add("unscoped acquired " + name); // never: the scoped listener gets it
        }
    };

    private final class Scoped implements LockListener {
        private final String trace;

        Scoped(String trace) {
            this.trace = trace;
        }

        @Override
        public void onAcquired(String name, long token, Duration waited) {
            events.add(trace + " acquired " + name + " after " + waited.toMillis() + "ms");
        }

        @Override
        public void onAcquireCancelled(String name, Duration waited) {
            events.add(trace + " cancelled " + name + " after " + waited.toMillis() + "ms");
        }

        @Override
        public void onContended(String name) {
            events.add(trace + " contended " + name);
        }

        @Override
        public void onRenewalStarted(String name, long token) {
            events.add(trace + " renewing " + name);
        }

        @Override
        public void onRenewed(String name, long token) {
            events.add(trace + " renewed " + name);
        }

        @Override
        public void onReleased(String name, long token, Duration held) {
            events.add(trace + " released " + name + " after " + held.toMillis() + "ms");
        }
    }

    @BeforeEach
    void setUp() {
        vts = VirtualTimeScheduler.create();
        LockClock clock = LockClock.of(vts);
        LocalLockStore store = new LocalLockStore(vts, clock);
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(30)).drift(0, Duration.ZERO)
                .scheduler(vts).clock(clock).build();
        a = LockClient.create(new LocalLockBackend(store), options, LockListener.composite(tracing));
        b = LockClient.create(new LocalLockBackend(store), options);
    }

    @AfterEach
    void tearDown() {
        a.close().block(VERIFY);
        b.close().block(VERIFY);
        vts.dispose();
    }

    @Test
    void eachAcquireAndItsLeaseReportToTheListenerMadeFromItsSubscribersContext() {
        StepVerifier.create(a.withLock("x", lease -> Mono.delay(Duration.ofSeconds(11), vts).thenReturn(lease.token()))
                        .contextWrite(Context.of("trace", "t1")))
                .then(() -> vts.advanceTimeBy(Duration.ofSeconds(11)))
                .expectNextCount(1)
                .expectComplete()
                .verify(VERIFY);
        Lease held = b.acquire("y").block(VERIFY);
        StepVerifier.create(a.tryAcquire("y").contextWrite(Context.of("trace", "t2")))
                .expectComplete()
                .verify(VERIFY);
        held.release().block(VERIFY);

        assertThat(events).containsExactly(
                "t1 started x", "t1 acquired x after 0ms", "t1 renewing x", "t1 renewed x", "t1 released x after 11000ms",
                "t2 started y", "t2 contended y");
    }

    @Test
    void aCancelBeforeTheGrantIsReportedToItsAcquiresListener() {
        Lease held = b.acquire("z").block(VERIFY);
        Disposable waiting = a.acquire("z").contextWrite(Context.of("trace", "t3")).subscribe();
        vts.advanceTimeBy(Duration.ofSeconds(2));
        waiting.dispose();
        assertThat(events).containsExactly("t3 started z", "t3 cancelled z after 2000ms");
        assertThat(a.metrics().pendingAcquireCount()).isZero();
        held.release().block(VERIFY);
    }
}
