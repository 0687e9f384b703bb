package io.reactivelocks.safety.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * At most N permit holders: on each semaphore name, never more than N leases valid at once. A lease
 * is valid from its grant until it was released or lost or its last deadline passed, whichever came
 * first (a lease whose end the history lacks, a killed worker's, until its first deadline). Every
 * process of a run reads the same monotonic clock, so these intervals are comparable.
 */
public final class PermitLimitChecker implements HistoryChecker {

    /** Makes the checker. */
    public PermitLimitChecker() {
    }

    @Override
    public String name() {
        return "permit-limit";
    }

    @Override
    public CheckVerdict check(History history) {
        Map<String, List<History.Hold>> byName = new HashMap<>();
        for (History.Hold h : history.holds()) {
            if (history.primitiveOf(h.name()).equals("semaphore")) {
                byName.computeIfAbsent(h.name(), n -> new ArrayList<>()).add(h);
            }
        }
        long judged = 0;
        for (List<History.Hold> holds : byName.values()) {
            judged += holds.size();
            List<History.Hold> bad = Overlaps.firstViolation(holds, valid -> valid.size() <= history.permits());
            if (!bad.isEmpty()) {
                return CheckVerdict.invalid(name(), bad.size() + " permits of " + bad.get(0).name() + " valid at once, N = "
                        + history.permits() + " (tokens " + bad.stream().map(History.Hold::token).toList() + ")", Overlaps.events(bad));
            }
        }
        return CheckVerdict.valid(name(), judged + " permits, never more than " + history.permits() + " valid at once");
    }
}
