package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.test.server.ServerFixture;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The short mode of the safety harness, part of the build: every backend × every fault kind, one
 * fault cycle each with two worker JVMs on two names. Fails on any I1–I5 violation or when a checker of
 * the run's history fails ({@link HistoryVerdicts}), and prints one summary line per run. One subclass per backend, so that the backends' runs (each on a server of
 * its own) can go side by side; select a subset with {@code -Dsafety.backends=REDIS,ETCD} and
 * {@code -Dsafety.faults=PAUSE_WORKER}. A backend may run fewer faults by default (to keep the build's time);
 * {@code -Dsafety.faults} then selects among all of them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SafetyShortModeContract {

    private final SafetyBackend backend;
    private final Set<Fault> defaultFaults;
    private ServerFixture server;

    SafetyShortModeContract(SafetyBackend backend) {
        this(backend, EnumSet.allOf(Fault.class));
    }

    /**
     * @param backend       the store
     * @param defaultFaults the faults run when {@code -Dsafety.faults} is not given
     */
    SafetyShortModeContract(SafetyBackend backend, Set<Fault> defaultFaults) {
        this.backend = backend;
        this.defaultFaults = defaultFaults;
    }

    Stream<Arguments> runs() {
        String backends = System.getProperty("safety.backends", "");
        String faults = System.getProperty("safety.faults", "");
        if (!backends.isBlank() && !backends.contains(backend.name())) {
            return Stream.empty();
        }
        return Stream.of(Fault.values())
                .filter(f -> f.appliesTo(backend) && (faults.isBlank() ? defaultFaults.contains(f) : faults.contains(f.name())))
                .map(f -> Arguments.of(backend, f));
    }

    @ParameterizedTest(name = "{0} {1}", allowZeroInvocations = true) // another backend selected
    @MethodSource("runs")
    void shortRun(SafetyBackend backend, Fault fault) throws Exception {
        if (server == null) {
            server = backend.start();
        }
        assertThat(server.supportsFaults())
                .as("the safety harness needs a server it can pause, kill and restart (a local binary); got %s", server)
                .isTrue();

        SafetyRun.Outcome outcome = SafetyRun.run(server, SafetyRun.Settings.shortMode(backend, fault));
        SafetyCheck.Verdict verdict = SafetyCheck.judge(outcome);
        System.out.println("[safety] " + verdict.summary());
        verdict.details().forEach(d -> System.out.println("[safety]   " + d));
        HistoryVerdicts.assertCheckersPass(outcome);

        assertThat(verdict.problems()).as("harness problems").isEmpty();
        assertThat(verdict.staleWritesAccepted()).as("I1 stale writes accepted").isZero();
        assertThat(verdict.lostUpdates()).as("I2 lost updates").isZero();
        assertThat(verdict.tokenOrder()).as("I3 token order violations").isZero();
        assertThat(verdict.heldPastValidity()).as("I4 held past validity: %s", verdict.details()).isZero();
        assertThat(verdict.leftOnServer()).as("I5 left on server").isZero();
        assertGrantsAndServedAgain(verdict);
        if (fault == Fault.PAUSE_WORKER) {
            // the frozen worker believed it held while another took over, and its late write was refused
            assertThat(verdict.overlaps()).as("overlaps under a pause (else the fault did not bite)").isPositive();
            assertThat(verdict.staleWritesRejected()).as("stale writes rejected under a pause").isPositive();
        }
        if (fault == Fault.FORCE_RELEASE) {
            // the evicted worker learned it (a loss), and nothing else broke: I1-I5 above
            assertThat(verdict.losses()).as("the force-released holder's loss").isPositive();
        }
        if (fault == Fault.KILL_WORKER) {
            assertThat(verdict.takeover()).as("takeover after the kill").isNotEmpty();
        }
    }

    /**
     * The run goes on until it has its grants and one after the fault ({@link SafetyRun#TAIL_BOUND}): short of
     * them, the store did not grant again within the bound.
     *
     * @param verdict a short run's verdict
     */
    static void assertGrantsAndServedAgain(SafetyCheck.Verdict verdict) {
        assertThat(verdict.acquisitions()).as("acquisitions (the run waits up to %s for %d)", SafetyRun.TAIL_BOUND,
                SafetyRun.SHORT_MODE_GRANTS).isGreaterThanOrEqualTo(SafetyRun.SHORT_MODE_GRANTS);
        assertThat(verdict.outcome().applied()).as("the fault was applied").isNotEmpty();
        long faultEnd = verdict.outcome().applied().get(verdict.outcome().applied().size() - 1).end();
        assertThat(SafetyRun.grantsAfter(verdict.outcome().events(), faultEnd))
                .as("grants after the fault was lifted (the store serves again)").isPositive();
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }
}
