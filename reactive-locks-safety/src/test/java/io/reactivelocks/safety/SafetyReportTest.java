package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The long-mode report: its table, and merging a later run into an earlier file. */
class SafetyReportTest {

    private static SafetyCheck.Verdict verdict(SafetyBackend backend, Fault fault, long acquisitions, List<String> details) {
        SafetyRun.Settings settings = SafetyRun.Settings.longMode(backend, fault, Duration.ofSeconds(60), 10_000, Duration.ofSeconds(180));
        SafetyRun.Outcome outcome = new SafetyRun.Outcome(settings, List.of(), List.of(),
                List.of(new SafetyRun.Applied(fault, 1, 0, 1, List.of())), 0, 0, 0, List.of(), 0, 1);
        return new SafetyCheck.Verdict(outcome, acquisitions, 0, 0, 0, details.size(), 0, 3, 0, 0, 2, 10, 1, 0,
                List.of(100L, 200L), List.of(), acquisitions, List.of(), details, 0, 0, 0, 0, 0);
    }

    @Test
    void importsTheRowsOfARunFromItsSummaryLines(@TempDir Path dir) throws Exception {
        SafetyCheck.Verdict v = verdict(SafetyBackend.POSTGRESQL, Fault.KILL_WORKER, 10_123, List.of());
        Path log = dir.resolve("log.txt");
        Files.writeString(log, "install-servers: present\n[safety] " + v.summary() + "\n[safety]   a detail line\n", StandardCharsets.UTF_8);
        SafetyReport.Previous previous = new SafetyReport.Previous();
        previous.importLog(log);
        assertThat(previous.rows).containsExactly(java.util.Map.entry("postgresql kill-worker", SafetyReport.row(v)));
        assertThat(previous.commands).singleElement().asString().contains("rows of 1 runs imported");
    }

    @Test
    void mergesALaterRunIntoAnEarlierFile(@TempDir Path dir) throws Exception {
        Path md = dir.resolve("SAFETY.md");
        Files.writeString(md, SafetyReport.markdown(List.of(
                        verdict(SafetyBackend.REDIS, Fault.PAUSE_WORKER, 11_000, List.of()),
                        verdict(SafetyBackend.ETCD, Fault.LATENCY, 7_000, List.of("I4: worker 2 held x"))),
                new SafetyReport.Previous(), "`reactive-locks-safety/run-long.sh --a` on today", "redis", null), StandardCharsets.UTF_8);

        SafetyReport.Previous previous = SafetyReport.Previous.read(md);
        assertThat(previous.rows).containsOnlyKeys("redis pause-worker", "etcd latency");
        assertThat(previous.notes).containsOnlyKeys("etcd latency");
        assertThat(previous.plotCaption).isEqualTo("redis");

        String merged = SafetyReport.markdown(List.of(verdict(SafetyBackend.ETCD, Fault.LATENCY, 12_000, List.of())), previous,
                "`reactive-locks-safety/run-long.sh --b` on today", null, null);
        assertThat(merged)
                .contains("- `reactive-locks-safety/run-long.sh --a` on today", "- `reactive-locks-safety/run-long.sh --b` on today")
                .contains("| redis | pause-worker | 11000 |", "| etcd | latency | 12000 |")
                .doesNotContain("| etcd | latency | 7000 |", "I4: worker 2 held x")
                .contains("- none: every fault found its target");
        assertThat(merged.indexOf("| redis | pause-worker")).isLessThan(merged.indexOf("| etcd | latency"));
    }

    /** A regenerated mutex report replaces only its own part of the page: hand-written sections and the primitives block stay. */
    @Test
    void aRegeneratedReportKeepsTheHandWrittenSections() {
        String page = SafetyReport.MUTEX_BEGIN + "\n# old report\n" + SafetyReport.MUTEX_END + "\n\n## Redis Cluster\nhand-written\n\n"
                + SafetyReport.BEGIN + "\nprimitives rows\n" + SafetyReport.END + "\n\n## History format\nhand-written too\n";
        String block = SafetyReport.BEGIN + "\nprimitives rows\n" + SafetyReport.END;
        String report = "# new report\n\n" + block + "\n";
        String written = SafetyReport.keepingTheRest(page, report, block);
        assertThat(written).startsWith(SafetyReport.MUTEX_BEGIN + "\n# new report\n" + SafetyReport.MUTEX_END)
                .doesNotContain("# old report")
                .contains("## Redis Cluster\nhand-written", "## History format\nhand-written too");
        assertThat(written.indexOf(SafetyReport.BEGIN)).isEqualTo(written.lastIndexOf(SafetyReport.BEGIN));
        assertThat(SafetyReport.keepingTheRest("", report, block)).as("a page without markers is written whole").isEqualTo(report);
    }
}
