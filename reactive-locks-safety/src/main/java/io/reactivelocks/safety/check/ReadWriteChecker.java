package io.reactivelocks.safety.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * No writer beside anyone: on each read-write name, a valid writer's lease never overlaps another valid
 * lease (reader or writer). Validity as in {@link PermitLimitChecker}.
 */
public final class ReadWriteChecker implements HistoryChecker {

    /** Makes the checker. */
    public ReadWriteChecker() {
    }

    @Override
    public String name() {
        return "read-write";
    }

    @Override
    public CheckVerdict check(History history) {
        Map<String, List<History.Hold>> byName = new HashMap<>();
        for (History.Hold h : history.holds()) {
            if (history.primitiveOf(h.name()).equals("rwlock")) {
                byName.computeIfAbsent(h.name(), n -> new ArrayList<>()).add(h);
            }
        }
        long judged = 0;
        for (List<History.Hold> holds : byName.values()) {
            judged += holds.size();
            List<History.Hold> bad = Overlaps.firstViolation(holds,
                    valid -> valid.size() < 2 || valid.stream().noneMatch(h -> h.mode().equals("w")));
            if (!bad.isEmpty()) {
                return CheckVerdict.invalid(name(), "a writer of " + bad.get(0).name() + " valid beside another lease: "
                        + bad.stream().map(h -> h.mode() + h.token() + "@" + h.client()).toList(), Overlaps.events(bad));
            }
        }
        return CheckVerdict.valid(name(), judged + " read and write leases, no writer beside another lease");
    }
}
