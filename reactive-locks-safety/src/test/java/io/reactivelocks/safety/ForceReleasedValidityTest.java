package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * I6(b) on a hand-made history: a permit an operator force-released (every grant of the name) is
 * no longer valid for its worker from the force-release on (the store may grant it to another at
 * once), so the next holder beside the worker that still believes it holds is an overlap, not a
 * permit over N — while the same two holds without the force-release are; I4 still judges the
 * belief against the lease's own validity. No servers.
 */
class ForceReleasedValidityTest {

    private static final String NAME = "t-n0";

    private static long ms(long ms) {
        return Duration.ofMillis(ms).toNanos();
    }

    /** Worker 0 holds 0–500 ms (valid to 2 s by its lease), worker 1 holds 200–300 ms; N = 1. */
    private static List<WorkerProcess.Event> twoHolds() {
        return List.of(
                new WorkerProcess.Event(0, 'G', NAME, 10, ms(0), "s", ms(2_000)),
                new WorkerProcess.Event(1, 'G', NAME, 11, ms(200), "s", ms(2_200)),
                new WorkerProcess.Event(1, 'E', NAME, 11, ms(300), "released", ms(2_200)),
                new WorkerProcess.Event(0, 'E', NAME, 10, ms(500), "lost", ms(2_000)));
    }

    private static SafetyRun.Outcome outcome(List<SafetyRun.Applied> applied) {
        SafetyRun.Settings settings = new SafetyRun.Settings(SafetyBackend.ETCD, Fault.FORCE_RELEASE, 2, 1, Duration.ofSeconds(2),
                Duration.ofMillis(500), Duration.ZERO, 0, Duration.ZERO, 1, List.of(Primitive.SEMAPHORE), 2);
        return new SafetyRun.Outcome(settings, twoHolds(), List.of(), applied, 0, 0, 0, List.of(), 0, ms(10_000));
    }

    private static long[] overOne(SafetyRun.Outcome o, boolean validOnly) {
        return PermitCheck.overN(SafetyCheck.intervals(o), 1, validOnly);
    }

    @Test
    void aForceReleasedHoldersBeliefIsAnOverlapNotAPermitOverN() {
        SafetyRun.Outcome forced = outcome(List.of(new SafetyRun.Applied(Fault.FORCE_RELEASE, 0, ms(100), ms(1_000), List.of(NAME))));
        assertThat(overOne(forced, true)[0]).as("permits over N inside the validity the store gave").isZero();
        assertThat(overOne(forced, false)[0]).as("beliefs over N: the overlap").isEqualTo(1);
    }

    @Test
    void withoutTheForceReleaseTheSameHoldsArePermitsOverN() {
        assertThat(overOne(outcome(List.of()), true)[0]).isEqualTo(1);
        // a force-release of another name, or of this one before worker 0's hold began, changes nothing
        SafetyRun.Outcome other = outcome(List.of(
                new SafetyRun.Applied(Fault.FORCE_RELEASE, 0, ms(100), ms(1_000), List.of("t-n1")),
                new SafetyRun.Applied(Fault.FORCE_RELEASE, 0, -ms(100), ms(1_000), List.of(NAME))));
        assertThat(overOne(other, true)[0]).isEqualTo(1);
    }

    @Test
    void aForceReleaseCutsEveryHoldOfTheNameNotOnlyTheTargetWorkers() {
        // the operator releases every grant of the name: aimed at worker 2, it ends worker 0's validity too
        SafetyRun.Outcome forced = outcome(List.of(new SafetyRun.Applied(Fault.FORCE_RELEASE, 2, ms(100), ms(1_000), List.of(NAME))));
        assertThat(overOne(forced, true)[0]).isZero();
        // and I4 still judges the belief against the lease's own validity (2 s): not past it
        assertThat(SafetyCheck.intervals(forced)).allSatisfy(i -> assertThat(i.validUntil()).isGreaterThanOrEqualTo(ms(2_000)));
    }
}
