package io.reactivelocks.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * B3's targets in the report: ours' p50 divided by the raw driver handoff's p50, and a chain that
 * did not complete shown as failed, without a figure. No server: the results are made up.
 */
class ReportHandoffTargetsTest {

    private static final Settings TINY = new Settings(true, new int[] {2}, 1, Duration.ofMillis(250), Duration.ofMillis(120),
            Duration.ofMillis(250), new int[] {16, 100}, new int[] {1, 1}, new int[] {1}, Duration.ofSeconds(3), 1, 50);

    @Test
    void theRatioToTheRawHandoffIsATargetAndAFailureIsNotAFigure(@TempDir Path out) throws Exception {
        System.setProperty("java.awt.headless", "true");
        FakeBench bench = new FakeBench();
        Contender ours = new FakeContender(Role.OURS, "reactive-locks");
        Contender raw = new FakeContender(Role.RAW_HANDOFF, "raw fake handoff");
        Handoff.Result result = new Handoff.Result(bench);
        result.rtt = histogram(100_000);
        // 16 waiters: both complete, ours 120 µs against raw 100 µs
        result.byWaiters.put(16, List.of(cell(ours, 16, 120_000, null), cell(raw, 16, 100_000, null)));
        // 100 waiters: the raw handoff's chain stopped half-way
        result.byWaiters.put(100, List.of(cell(ours, 100, 120_000, null), cell(raw, 100, 100_000, "acquire: boom")));
        Report report = report();
        report.server(bench);
        report.b3(result);
        String md = written(report, out);
        assertThat(md).contains("| B3 | Fake, 16 waiters: ours p50 ÷ raw driver handoff p50 | ≤ 1.3× | 1.20× (120 µs ÷ 100 µs) | met |");
        assertThat(md).contains("| B3 | Fake, 100 waiters: ours p50 ÷ raw driver handoff p50 | ≤ 1.3× | raw fake handoff failed: "
                + "1 of 1 chains incomplete (acquire: boom) | **failed** |");
        assertThat(md).contains("| B3 | Fake, 100 waiters: ours p50 handoff | ≤ 2.5 RTT | 1.20 RTT");
    }

    @Test
    void aB1TargetShowsTheMedianRatioAndTheLowestAndHighestRound(@TempDir Path out) throws Exception {
        System.setProperty("java.awt.headless", "true");
        FakeBench bench = new FakeBench();
        Uncontended.Cell ours = new Uncontended.Cell(new FakeContender(Role.OURS, "reactive-locks"), 1);
        Uncontended.Cell floor = new Uncontended.Cell(new FakeContender(Role.FLOOR, "fake floor"), 1);
        // three rounds, ours ÷ floor 1.00, 0.90, 1.10
        for (double oursOps : new double[] {100, 90, 110}) {
            ours.rounds.add(run(oursOps));
            floor.rounds.add(run(100));
        }
        Uncontended.Result result = new Uncontended.Result(bench);
        result.levels.put(1, List.of(ours, floor));
        Report report = report();
        report.server(bench);
        report.b1(result);
        String md = written(report, out);
        assertThat(md).contains("| B1 | Fake, c=1: ours ÷ fake floor | ≥ 0.95× | 1.00× (rounds 0.90–1.10) | met |");
    }

    private static Report report() {
        return new Report(TINY, "ReportHandoffTargetsTest", System.currentTimeMillis() / 1000, "test");
    }

    /** @return the BENCHMARKS.md that {@code report} writes to {@code out} */
    private static String written(Report report, Path out) throws java.io.IOException {
        report.write(out);
        return Files.readString(out.resolve("BENCHMARKS.md"), StandardCharsets.UTF_8);
    }

    private static Uncontended.Run run(double opsPerSec) {
        return new Uncontended.Run(opsPerSec, (long) opsPerSec, 0, 1000, 2000, 2, 2, 10_000, 20_000, 1000, null);
    }

    @Test
    void aRenewalCpuFigureAtOrBelowZeroIsNoFigure(@TempDir Path out) throws Exception {
        System.setProperty("java.awt.headless", "true");
        Report report = report();
        // 100,000 renewals: 120 ms of CPU in the window, 100 ms of it idle -> 0.2 µs; another run's idle rate above the window's
        report.b4(List.of(renewals(100_000, 120e6, 100e6), renewals(10_000, 50e6, 230e6)));
        String md = written(report, out);
        assertThat(md).contains("| B4 | 100000 leases: ours client CPU per renewed lease | ≤ 1.5 µs | 0.2 µs | met |");
        assertThat(md).contains("| B4 | 10000 leases: ours client CPU per renewed lease | ≤ 1.5 µs | no figure: the idle CPU "
                + "subtracted (230 ms) was not below the window's (50 ms) | **failed** |");
    }

    private static Renewal.Case renewals(int leases, double cpuNanos, double idleCpuNanos) {
        return new Renewal.Case("reactive-locks", Role.OURS, leases, 1, 500, 20, 2, 100_000, 10, 10, 10, 100, cpuNanos, idleCpuNanos,
                1, 10, leases, 0, 100, null);
    }

    private static Histogram histogram(long value) {
        Histogram h = new Histogram(3);
        h.recordValue(value);
        return h;
    }

    private static Handoff.Cell cell(Contender c, int n, long p50, String error) {
        Handoff.Cell cell = new Handoff.Cell(c, n);
        int grants = error == null ? n : n / 2;
        Histogram h = new Histogram(3);
        h.recordValueWithCount(p50, grants);
        cell.chains.add(new Handoff.Chain(h, grants, n, new BackendBench.Counts(2L * n, -1), error));
        return cell;
    }

    /** A contender that is never run. */
    private static final class FakeContender extends Contender {
        FakeContender(Role role, String label) {
            super("fake", role.name().toLowerCase(), label, role);
        }

        @Override
        public void close() {
        }
    }

    /** A backend without a server. */
    private static final class FakeBench extends BackendBench {
        FakeBench() {
            super("fake", "Fake");
        }

        @Override
        void start() {
        }

        @Override
        List<Contender> contenders() {
            return List.of();
        }

        @Override
        Counts counts() {
            return new Counts(0, -1);
        }

        @Override
        String counterDescription() {
            return "none";
        }

        @Override
        Histogram roundTrip(int samples) {
            return histogram(100_000);
        }

        @Override
        String roundTripDescription() {
            return "none";
        }

        @Override
        Map<String, String> serverInfo() {
            return Map.of("version", "fake");
        }

        @Override
        public void close() {
        }
    }
}
