package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.test.server.Topology;
import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The short mode of the safety harness on the replicated deployments, part of the build: every
 * {@link SafetyTopology} × the node faults that fit the build's time ({@link SafetyTopology#shortModeFaults()}:
 * one per deployment by default), one fault cycle each with two worker JVMs on two names.
 * Fails on any I1–I5 violation or when a checker of the run's history fails ({@link HistoryVerdicts}). Select with {@code -Dsafety.topologies=ETCD_CLUSTER} and
 * {@code -Dsafety.topology.faults=KILL_LEADER,FAILOVER,PARTITION_LEADER,SLOW_NODE}.
 */
@org.junit.jupiter.api.parallel.ResourceLock(SafetyLanes.A) // two fault-injection runs at a time, whatever else runs
class TopologyShortModeTest {

    private static final Map<SafetyTopology, Topology> TOPOLOGIES = new EnumMap<>(SafetyTopology.class);

    static Stream<Arguments> runs() {
        String topologies = System.getProperty("safety.topologies", "");
        String faults = System.getProperty("safety.topology.faults", "");
        return Stream.of(SafetyTopology.values())
                .filter(t -> topologies.isBlank() || topologies.contains(t.name()))
                .flatMap(t -> (faults.isBlank() ? t.shortModeFaults()
                        : Stream.of(faults.split(",")).map(f -> Fault.valueOf(f.trim())).toList())
                        .stream().map(f -> Arguments.of(t, f)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("runs")
    void shortRun(SafetyTopology topology, Fault fault) throws Exception {
        Topology deployment = TOPOLOGIES.computeIfAbsent(topology, SafetyTopology::start);

        SafetyRun.Outcome outcome = SafetyRun.run(deployment, SafetyRun.Settings.shortMode(topology, fault));
        SafetyCheck.Verdict verdict = SafetyCheck.judge(outcome);
        System.out.println("[safety] " + verdict.summary());
        verdict.details().forEach(d -> System.out.println("[safety]   " + d));
        HistoryVerdicts.assertCheckersPass(outcome);

        assertThat(verdict.problems()).as("harness problems").isEmpty();
        assertThat(verdict.staleWritesAccepted()).as("I1 stale writes accepted").isZero();
        assertThat(verdict.lostUpdates()).as("I2 lost updates").isZero();
        assertThat(verdict.tokenOrder()).as("I3 token order violations (across the failover)").isZero();
        assertThat(verdict.heldPastValidity()).as("I4 held past validity: %s", verdict.details()).isZero();
        assertThat(verdict.leftOnServer()).as("I5 left on the deployment").isZero();
        SafetyShortModeContract.assertGrantsAndServedAgain(verdict);
    }

    @AfterAll
    static void stopTopologies() {
        TOPOLOGIES.values().forEach(Topology::close);
    }
}
