package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The FIFO check and the hold intervals on hand-made histories: the check fails a grant out of line
 * order, and judges only what the store promises (a place acknowledged before the other's request
 * was sent). No servers: a few milliseconds.
 */
class FifoCheckTest {

    private static final String NAME = "t-n0";

    private final List<WorkerProcess.Event> events = new ArrayList<>();

    private static long ms(long ms) {
        return Duration.ofMillis(ms).toNanos();
    }

    private FifoCheckTest event(int worker, char type, long atMs) {
        events.add(new WorkerProcess.Event(worker, type, NAME, 0, ms(atMs), "", 0));
        return this;
    }

    private FifoCheckTest granted(int worker, long token, long atMs) {
        events.add(new WorkerProcess.Event(worker, 'G', NAME, token, ms(atMs), "f", ms(atMs + 1000)));
        return this;
    }

    private FifoCheckTest ended(int worker, long token, long atMs) {
        events.add(new WorkerProcess.Event(worker, 'E', NAME, token, ms(atMs), "released", ms(atMs + 500)));
        return this;
    }

    private SafetyRun.Outcome outcome() {
        SafetyRun.Settings settings = new SafetyRun.Settings(SafetyBackend.REDIS, Fault.PAUSE_WORKER, 3, 1, Duration.ofSeconds(1),
                Duration.ofMillis(500), Duration.ZERO, 0, Duration.ZERO, 1, List.of(Primitive.FAIR), 2);
        return new SafetyRun.Outcome(settings, List.copyOf(events), List.of(), List.of(), 0, 0, 0, List.of(), 0, ms(10_000));
    }

    private FifoCheck.Result judge() {
        return FifoCheck.judge(outcome(), new ArrayList<>());
    }

    /** Worker 0 holds; worker 1 is in the line at 15 ms, worker 2 asks at 21 ms and is in line at 25 ms. */
    private FifoCheckTest twoQueuedBehindAHolder() {
        event(0, 'Q', 0).event(0, 'I', 1).granted(0, 10, 5);
        event(1, 'Q', 10).event(1, 'I', 11).event(1, 'A', 15);
        event(2, 'Q', 20).event(2, 'I', 21).event(2, 'A', 25);
        return ended(0, 10, 100);
    }

    @Test
    void grantsInLineOrderPass() {
        twoQueuedBehindAHolder().granted(1, 11, 105).ended(1, 11, 200).granted(2, 12, 210);

        FifoCheck.Result r = judge();

        assertThat(r.pairs()).as("worker 1 in line before worker 2 asked").isEqualTo(1);
        assertThat(r.violations()).isZero();
    }

    @Test
    void aGrantOutOfLineOrderFails() {
        twoQueuedBehindAHolder().granted(2, 11, 105).ended(2, 11, 200).granted(1, 12, 210);

        List<String> details = new ArrayList<>();
        FifoCheck.Result r = FifoCheck.judge(outcome(), details);

        assertThat(r.pairs()).isEqualTo(1);
        assertThat(r.violations()).isEqualTo(1);
        assertThat(details).singleElement().asString().contains("FIFO", "worker 1", "token 12 after token 11");
        SafetyCheck.Verdict verdict = SafetyCheck.judge(outcome());
        assertThat(verdict.fifoViolations()).isEqualTo(1);
        assertThat(verdict.safe()).isFalse();
    }

    @Test
    void aWaiterGrantedAtOnceWhileAnotherIsInLineFails() {
        event(0, 'Q', 0).event(0, 'I', 1).granted(0, 10, 5);
        event(1, 'Q', 10).event(1, 'I', 11).event(1, 'A', 15);
        ended(0, 10, 100);
        event(2, 'Q', 101).event(2, 'I', 102).granted(2, 11, 103); // barged past worker 1
        ended(2, 11, 150).granted(1, 12, 155);

        FifoCheck.Result r = judge();

        assertThat(r.pairs()).isEqualTo(1);
        assertThat(r.violations()).isEqualTo(1);
    }

    @Test
    void requestsInFlightTogetherAreNotJudged() {
        // worker 2's request left before worker 1's place was acknowledged: the store may order them either way
        event(0, 'Q', 0).event(0, 'I', 1).granted(0, 10, 5);
        event(1, 'Q', 10).event(1, 'I', 11);
        event(2, 'Q', 12).event(2, 'I', 13);
        event(1, 'A', 15).event(2, 'A', 16);
        ended(0, 10, 100).granted(2, 11, 105).ended(2, 11, 200).granted(1, 12, 210);

        assertThat(judge()).isEqualTo(new FifoCheck.Result(0, 0));
    }

    @Test
    void aWaitIsJudgedByItsLastRequest() {
        // worker 1 was in line at 15 ms, then asked again at 30 ms (after worker 2's request): its old place is gone
        event(0, 'Q', 0).event(0, 'I', 1).granted(0, 10, 5);
        event(1, 'Q', 10).event(1, 'I', 11).event(1, 'A', 15);
        event(2, 'Q', 20).event(2, 'I', 21).event(2, 'A', 25);
        event(1, 'I', 30).event(1, 'A', 32);
        ended(0, 10, 100).granted(2, 11, 105).ended(2, 11, 200).granted(1, 12, 210);

        FifoCheck.Result r = judge();

        assertThat(r.pairs()).as("worker 2 in line before worker 1's last request").isEqualTo(1);
        assertThat(r.violations()).isZero();
    }

    @Test
    void aHoldEndsWithItsOwnTokenWhenItsEndIsReportedAfterTheNextGrant() {
        // the E of a hold reaches the harness after the worker's next section's grant (different threads)
        granted(0, 10, 0);
        event(0, 'Q', 50).granted(0, 11, 52);
        ended(0, 10, 49).ended(0, 11, 80);

        List<SafetyCheck.Interval> holds = SafetyCheck.intervals(outcome());

        assertThat(holds).extracting(SafetyCheck.Interval::token, SafetyCheck.Interval::end)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(10L, ms(49)), org.assertj.core.groups.Tuple.tuple(11L, ms(80)));
    }
}
