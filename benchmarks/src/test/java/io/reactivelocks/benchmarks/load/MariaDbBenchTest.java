package io.reactivelocks.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MariaDB part of the load harness in a tiny mode (one concurrency level, a few hundred
 * milliseconds per contender, one short handoff chain): every contender of B1, B3 and B8 runs
 * without errors against a real MariaDB ({@code MariaDbServer}), the server's request counter moves,
 * and the report is written. No figure is asserted: a shared machine cannot hold one.
 */
class MariaDbBenchTest {

    /** One level of 2 workers, 1 round of 250 ms (warm-ups 120 / 250 ms), one chain of 3 waiters. */
    private static final Settings TINY = new Settings(true, new int[] {2}, 1, Duration.ofMillis(250), Duration.ofMillis(120),
            Duration.ofMillis(250), new int[] {3}, new int[] {1}, new int[] {1}, Duration.ofSeconds(3), 1, 50);

    private static MariaDbBench bench;

    @BeforeAll
    static void start() {
        System.setProperty("java.awt.headless", "true");
        bench = new MariaDbBench();
        bench.start();
    }

    @AfterAll
    static void stop() {
        if (bench != null) {
            bench.close();
        }
    }

    @Test
    @Timeout(60)
    void everyContenderRunsAndTheReportIsWritten(@TempDir Path out) throws Exception {
        Report report = new Report(TINY, "MariaDbBenchTest", System.currentTimeMillis() / 1000, "test");
        report.server(bench);
        List<Contender> contenders = new ArrayList<>(bench.contenders());
        Uncontended.Result b1;
        Handoff.Result b3;
        try {
            assertThat(contenders).extracting(c -> c.role).containsExactly(Role.FLOOR, Role.OURS, Role.COMPETITOR, Role.SIMPLE,
                    Role.RAW_HANDOFF);
            b1 = Uncontended.run(bench, contenders, TINY);
            b3 = Handoff.run(bench, contenders, TINY);
        } finally {
            contenders.forEach(Contender::close);
        }
        for (Uncontended.Cell cell : b1.levels.get(2)) {
            assertThat(cell.errors()).as("%s: %s", cell.contender, cell.error()).isZero();
            assertThat(cell.rounds).allSatisfy(r -> {
                assertThat(r.ops()).as("%s completed pairs", cell.contender).isPositive();
                assertThat(r.countedPerOp()).as("%s statements per pair (server-counted)", cell.contender).isGreaterThanOrEqualTo(2);
            });
        }
        List<Handoff.Cell> handoffs = b3.byWaiters.get(3);
        assertThat(handoffs).extracting(c -> c.contender.role).containsExactly(Role.OURS, Role.RAW_HANDOFF);
        for (Handoff.Cell cell : handoffs) {
            assertThat(cell.incomplete()).as("%s incomplete chains: %s", cell.contender, cell.error()).isZero();
            assertThat(cell.countedPerHandoff(b3.overheadCounted)).as("%s statements per handoff", cell.contender).isPositive();
        }

        List<Primitives.Result> b8 = Primitives.run(bench, TINY);
        assertThat(b8).extracting(r -> r.group.key()).containsExactly("sem", "read", "write", "fair");
        for (Primitives.Result r : b8) {
            for (Uncontended.Cell cell : r.levels.get(2)) {
                assertThat(cell.errors()).as("B8 %s %s: %s", r.group.key(), cell.contender, cell.error()).isZero();
                assertThat(cell.ops()).as("B8 %s %s pairs/s", r.group.key(), cell.contender).isPositive();
            }
            for (Handoff.Cell cell : r.handoffs) {
                assertThat(cell.incomplete()).as("B8 %s handoff: %s", r.group.key(), cell.error()).isZero();
            }
        }

        report.b1(b1);
        report.b3(b3);
        report.b8(b8);
        report.write(out);
        String md = Files.readString(out.resolve("BENCHMARKS.md"), StandardCharsets.UTF_8);
        assertThat(md).contains("### MariaDB", "ShedLock R2DBC", "raw r2dbc-mariadb statements (floor)", "Questions",
                        "raw r2dbc-mariadb handoff", "ours p50 ÷ raw driver handoff p50")
                .doesNotContain("Failures in this run");
    }

    @Test
    @Timeout(30)
    void theSimplestLockTakesAFreeNameOnlyAndAnExpiredOne() {
        SimpleLocks.MariaDb simple = new SimpleLocks.MariaDb(bench.pool());
        try {
            String name = "simple-check-" + System.nanoTime();
            assertThat(simple.take(name, "a").block(Duration.ofSeconds(10))).as("free name").isTrue();
            assertThat(simple.take(name, "b").block(Duration.ofSeconds(10))).as("held by a").isFalse();
            bench.execute("UPDATE bench_simple_locks SET locked_until = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE name = ?", name);
            assertThat(simple.take(name, "b").block(Duration.ofSeconds(10))).as("a's lease expired").isTrue();
        } finally {
            simple.close();
        }
    }
}
