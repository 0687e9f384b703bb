package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.test.server.ServerFixture;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The short mode of the new primitives, part of the build: per backend one run with three worker
 * JVMs on three names — a semaphore (N = 2), a read-write lock and a fair lock — and one
 * worker-pause cycle on the semaphore name and one on the read-write name (the others crowd the
 * frozen holder's name); before the first pause, a burst of two lease times (longer on a slow machine) on the fair name (every
 * worker takes only it, so two wait in its line behind the holder). Fails on any I1–I7 or FIFO
 * violation or a checker of the run's history ({@link HistoryVerdicts}), when a pause did not bite on a primitive (no overlap past the fencing, no late write
 * refused), and when the FIFO check judged fewer than {@value #MIN_FIFO_PAIRS} pairs. Select
 * backends with {@code -Dsafety.backends=REDIS,ETCD}; MariaDB runs only when selected so (its mutex
 * short mode, {@code MariaDbSafetyShortModeTest}, is what the build's time allows).
 */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.B) // two fault-injection runs at a time, whatever else runs
class SafetyPrimitivesShortModeTest {

    /** Pairs of fair-lock waits the FIFO check must judge per run (with warm clients the 2 s burst gives dozens). */
    private static final long MIN_FIFO_PAIRS = 5;

    private static final Map<SafetyBackend, ServerFixture> SERVERS = new EnumMap<>(SafetyBackend.class);

    static Stream<Arguments> runs() {
        String backends = System.getProperty("safety.backends", "");
        return Stream.of(SafetyBackend.values())
                .filter(b -> backends.isBlank() ? b != SafetyBackend.MARIADB : backends.contains(b.name()))
                .map(Arguments::of);
    }

    @ParameterizedTest(name = "{0} semaphore+rwlock+fair pause-worker")
    @MethodSource("runs")
    void pausedHolderIsFenced(SafetyBackend backend) throws Exception {
        ServerFixture server = SERVERS.computeIfAbsent(backend, SafetyBackend::start);
        assertThat(server.supportsFaults()).as("a server the harness can pause (a local binary); got %s", server).isTrue();

        SafetyRun.Settings settings = SafetyRun.Settings.shortMode(backend, Fault.PAUSE_WORKER,
                List.of(Primitive.SEMAPHORE, Primitive.RWLOCK, Primitive.FAIR));
        long started = System.nanoTime();
        SafetyRun.Outcome outcome = SafetyRun.run(server, settings);
        SafetyCheck.Verdict verdict = SafetyCheck.judge(outcome);
        System.out.println("[safety] " + verdict.summary() + " (" + (System.nanoTime() - started) / 1_000_000 + " ms)");
        verdict.details().forEach(d -> System.out.println("[safety]   " + d));
        if (!verdict.safe()) { // the whole run, to read what happened
            java.nio.file.Path dump = java.nio.file.Paths.get("target", "safety-primitives-" + backend + ".txt");
            java.nio.file.Files.createDirectories(dump.getParent());
            java.nio.file.Files.write(dump, Stream.concat(outcome.events().stream().map(Object::toString),
                    outcome.ops().stream().map(Object::toString)).toList());
        }

        HistoryVerdicts.assertCheckersPass(outcome);
        assertThat(verdict.problems()).as("harness problems").isEmpty();
        assertThat(verdict.permitOverflow()).as("I6 more than N permit holders: %s", verdict.details()).isZero();
        assertThat(verdict.rwConflicts()).as("I7 read-write conflicts: %s", verdict.details()).isZero();
        assertThat(verdict.fifoViolations()).as("FIFO violations: %s", verdict.details()).isZero();
        // the burst on the fair name queues two workers behind the holder: the FIFO check had pairs to judge
        assertThat(verdict.fifoPairs()).as("FIFO pairs judged (a waiter in line before another asked)")
                .isGreaterThanOrEqualTo(MIN_FIFO_PAIRS);
        assertThat(verdict.staleWritesAccepted()).as("I1 stale writes accepted (fair name)").isZero();
        assertThat(verdict.lostUpdates()).as("I2 lost updates").isZero();
        assertThat(verdict.tokenOrder()).as("I3 token order: %s", verdict.details()).isZero();
        assertThat(verdict.heldPastValidity()).as("I4 held past validity: %s", verdict.details()).isZero();
        assertThat(verdict.leftOnServer()).as("I5 left on server").isZero();
        assertThat(verdict.outcome().applied()).as("one pause per fenced primitive").hasSize(2);

        // each pause bit: the frozen holder overlapped the next holders, and its late write was refused
        for (char mode : new char[] {'s', 'w'}) {
            Primitive primitive = mode == 's' ? Primitive.SEMAPHORE : Primitive.RWLOCK;
            long refused = outcome.ops().stream().filter(op -> op.mode() == mode && op.write() && !op.accepted()).count();
            assertThat(refused).as("late %s writes refused under the pause", primitive.label()).isPositive();
            long grants = outcome.events().stream()
                    .filter(e -> e.type() == 'G' && SafetyCheck.primitiveOf(outcome, e.name()) == primitive).count();
            assertThat(grants).as("%s grants", primitive.label()).isGreaterThan(5);
        }
        assertThat(verdict.overlaps()).as("overlaps under the pauses (else the faults did not bite)").isPositive();
        assertThat(verdict.evictions()).as("semaphore slots the arbiter took from the frozen holder").isPositive();
    }

    @AfterAll
    static void stopServers() {
        SERVERS.values().forEach(ServerFixture::close);
    }
}
