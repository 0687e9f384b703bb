package io.reactivelocks.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactivelocks.safety.check.CheckVerdict;
import io.reactivelocks.safety.check.History;
import io.reactivelocks.safety.check.HistoryChecker;
import java.nio.file.Files;

/** The short-mode runs' histories judged by every checker of {@code io.reactivelocks.safety.check}. */
final class HistoryVerdicts {

    private HistoryVerdicts() {
    }

    /**
     * Reads the run's history file and asserts that every checker passes it (linearizability may be
     * unknown when its bounded search gave up; it is printed then).
     *
     * @param outcome the run
     */
    static void assertCheckersPass(SafetyRun.Outcome outcome) {
        assertThat(outcome.history()).as("the run's history file (problems: %s)", outcome.problems()).isNotNull();
        assertThat(Files.exists(outcome.history())).as("history %s written", outcome.history()).isTrue();
        long started = System.nanoTime();
        History history = History.read(outcome.history());
        assertThat(history.operations("read")).as("register reads in the history %s", outcome.history()).isNotEmpty();
        for (HistoryChecker checker : HistoryChecker.all()) {
            CheckVerdict verdict = checker.check(history);
            System.out.println("[safety]   history " + verdict.checker() + ": " + verdict.status() + " — " + verdict.message());
            if (checker.name().equals("linearizability") && verdict.status() == CheckVerdict.Status.UNKNOWN) {
                continue;
            }
            assertThat(verdict.status()).as("%s on the history %s:\n%s", checker.name(), outcome.history(), verdict)
                    .isEqualTo(CheckVerdict.Status.VALID);
        }
        System.out.println("[safety]   history of " + history.events().size() + " events read and checked in "
                + (System.nanoTime() - started) / 1_000_000 + " ms");
    }
}
