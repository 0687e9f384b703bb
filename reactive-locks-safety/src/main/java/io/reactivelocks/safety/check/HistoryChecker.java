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
        return List.of(new MutualExclusionChecker(), new TokenOrderChecker(), new PermitLimitChecker(), new ReadWriteChecker(),
                new FifoChecker(), new LinearizabilityChecker());
    }
}
