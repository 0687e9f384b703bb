package io.reactivelocks.safety.check;

import java.util.List;

/** A check of a recorded history, independent of the harness's counters. */
public interface HistoryChecker {

    /** @return the checker's name, as it appears in verdicts */
    String name();

    /**
     * Judges a history.
     *
     * @param history the parsed history
     * @return the verdict, with the offending events when invalid
     */
    CheckVerdict check(History history);

    /**
     * @return every checker: mutual exclusion at the arbiter, token order, permit limit, read-write
     *         exclusion, FIFO, linearizability of the fenced register
     */
    static List<HistoryChecker> all() {
        return List.of(new ArbiterExclusionChecker(), new TokenOrderChecker(), new PermitLimitChecker(), new ReadWriteChecker(),
                new FifoChecker(), new LinearizabilityChecker());
    }

    /**
     * Judges a history with every checker ({@link #all()}).
     *
     * @param history the history
     * @return the verdicts, in the order of {@link #all()}
     */
    static List<CheckVerdict> checkAll(History history) {
        return all().stream().map(c -> c.check(history)).toList();
    }

    /**
     * Judges history files from the command line, one verdict a line per checker; exits with 1 when a
     * checker found a violation.
     *
     * @param args the history files
     */
    static void main(String[] args) {
        boolean invalid = false;
        for (String file : args) {
            for (CheckVerdict v : checkAll(History.read(java.nio.file.Paths.get(file)))) {
                System.out.println(file + ": " + v);
                invalid |= v.status() == CheckVerdict.Status.INVALID;
            }
        }
        System.exit(invalid ? 1 : 0);
    }
}
