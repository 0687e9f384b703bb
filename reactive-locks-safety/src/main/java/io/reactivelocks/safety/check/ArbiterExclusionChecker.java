package io.reactivelocks.safety.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Mutual exclusion as the fenced resource sees it: on each mutex, fair-lock and read-write name, the
 * register operations the arbiter accepted, in its decision order. Between the first and the last
 * accepted operation of one lease (token) no accepted operation of another lease may come — for a
 * read-write name, unless both are readers' (semaphore names have their own check). A lease whose
 * late write was refused does not count: refusing it is what fencing is for.
 */
public final class ArbiterExclusionChecker implements HistoryChecker {

    /** Makes the checker. */
    public ArbiterExclusionChecker() {
    }

    @Override
    public String name() {
        return "mutual-exclusion";
    }

    @Override
    public CheckVerdict check(History history) {
        Map<String, List<HistoryEvent>> accepted = new HashMap<>();
        Map<String, String> modes = modes(history);
        for (HistoryEvent e : history.events()) {
            if ("accepted".equals(e.verdict()) && e.order() != null && e.name() != null && e.token() != null
                    && !history.primitiveOf(e.name()).equals("semaphore")) {
                accepted.computeIfAbsent(e.name(), n -> new ArrayList<>()).add(e);
            }
        }
        long judged = 0;
        for (List<HistoryEvent> ops : accepted.values()) {
            ops.sort(Comparator.comparingLong(e -> Objects.requireNonNull(e.order())));
            judged += ops.size();
            Map<Long, Integer> last = new HashMap<>();
            for (int i = 0; i < ops.size(); i++) {
                last.put(ops.get(i).token(), i);
            }
            Map<Long, Integer> first = new HashMap<>();
            for (int i = 0; i < ops.size(); i++) {
                first.putIfAbsent(ops.get(i).token(), i);
            }
            for (Map.Entry<Long, Integer> f : first.entrySet()) {
                long token = f.getKey();
                for (int i = f.getValue() + 1; i < last.get(token); i++) {
                    HistoryEvent other = ops.get(i);
                    if (other.token() != token && !(reader(modes, other) && reader(modes, ops.get(f.getValue())))) {
                        return CheckVerdict.invalid(name(), "on " + other.name() + " the arbiter accepted token " + other.token()
                                + " between accepted operations of token " + token, List.of(ops.get(f.getValue()), other,
                                ops.get(last.get(token))));
                    }
                }
            }
        }
        return CheckVerdict.valid(name(), judged + " accepted register operations, no lease's interleaved with another's");
    }

    /** @return the mode of each client's lease (client/name/token → m, f, r, w) */
    static Map<String, String> modes(History history) {
        Map<String, String> modes = new HashMap<>();
        for (HistoryEvent e : history.events()) {
            if (e.op().equals("acquire") && e.isOk() && e.mode() != null) {
                modes.put(e.name() + "/" + e.token(), e.mode());
            }
        }
        return modes;
    }

    private static boolean reader(Map<String, String> modes, HistoryEvent e) {
        return "r".equals(e.mode()) || "r".equals(modes.get(e.name() + "/" + e.token()));
    }
}
