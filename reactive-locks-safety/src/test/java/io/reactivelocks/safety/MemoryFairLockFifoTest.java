package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockClock;
import io.reactivelocks.LockOptions;
import io.reactivelocks.local.LocalFairLockBackend;
import io.reactivelocks.local.LocalLockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The in-memory fair lock ({@link LocalFairLockBackend}) judged by the harness's FIFO check: the
 * worker JVMs of a safety run cannot share an in-memory store, so here three clients of one store
 * loop on one name on virtual time (hold 50–150 ms, release, ask again), watched by the same
 * {@link ObservedFairBackend}, and their history goes through {@link FifoCheck}. No servers, no real
 * waiting: well under a second.
 */
class MemoryFairLockFifoTest {

    private static final String NAME = "mem-n0";

    private final VirtualTimeScheduler vts = VirtualTimeScheduler.create();
    private final List<WorkerProcess.Event> events = new ArrayList<>();
    private final List<LockClient> clients = new ArrayList<>();

    @AfterEach
    void tearDown() {
        clients.forEach(c -> c.close().block(Duration.ofSeconds(10)));
        vts.dispose();
    }

    private long now() {
        return vts.now(TimeUnit.NANOSECONDS);
    }

    private void record(int worker, char type, long token, String how) {
        events.add(new WorkerProcess.Event(worker, type, NAME, token, now(), how, now() + Duration.ofSeconds(1).toNanos()));
    }

    /** One worker's loop: wait (Q), hold for 50 + 50 × worker ms (G … E), release, again. */
    private Disposable worker(int id, LocalLockStore store, LockOptions options) {
        LineListener line = new LineListener() {
            @Override
            public void onAsked(String name) {
                record(id, 'I', 0, "");
            }

            @Override
            public void onInLine(String name) {
                record(id, 'A', 0, "");
            }
        };
        LockClient fair = ObservedFairBackend.over(new LocalFairLockBackend(store), options, line);
        clients.add(fair);
        return Mono.defer(() -> {
                    record(id, 'Q', 0, "");
                    return fair.acquire(NAME);
                })
                .flatMap(lease -> {
                    record(id, 'G', lease.token(), "f");
                    return Mono.delay(Duration.ofMillis(50 + 50L * id), vts)
                            .then(Mono.defer(() -> {
                                record(id, 'E', lease.token(), "released");
                                return lease.release();
                            }));
                })
                .repeat()
                .subscribe();
    }

    @Test
    void threeClientsQueueingOnOneNameAreGrantedInLineOrder() {
        LocalLockStore store = new LocalLockStore(vts, LockClock.of(vts));
        LockOptions options = LockOptions.builder().leaseTime(Duration.ofSeconds(1)).waitTimeout(Duration.ofMinutes(1))
                .scheduler(vts).clock(LockClock.of(vts)).build();
        long start = now();
        List<Disposable> loops = new ArrayList<>();
        for (int id = 0; id < 3; id++) {
            loops.add(worker(id, store, options));
            vts.advanceTimeBy(Duration.ofMillis(5)); // staggered arrivals
        }
        vts.advanceTimeBy(Duration.ofSeconds(5));
        loops.forEach(Disposable::dispose);

        SafetyRun.Settings settings = new SafetyRun.Settings(SafetyBackend.REDIS, Fault.PAUSE_WORKER, 3, 1, Duration.ofSeconds(1),
                Duration.ZERO, Duration.ZERO, 0, Duration.ZERO, 1, List.of(Primitive.FAIR), 2); // only the lease and primitives matter here
        SafetyRun.Outcome outcome = new SafetyRun.Outcome(settings, List.copyOf(events), List.of(), List.of(), 0, 0, 0, List.of(),
                start, now());
        List<String> details = new ArrayList<>();
        FifoCheck.Result r = FifoCheck.judge(outcome, details);

        long grants = events.stream().filter(e -> e.type() == 'G').count();
        assertThat(grants).as("grants in 5 s of 50–150 ms holds").isGreaterThan(20);
        assertThat(r.pairs()).as("pairs judged").isGreaterThan(20);
        assertThat(r.violations()).as("FIFO violations: %s", details).isZero();
    }
}
