package io.reactivelocks.safety.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;

/** Which valid leases of one name overlap: a sweep over the leases' validity intervals. */
final class Overlaps {

    private Overlaps() {
    }

    /**
     * The first moment at which the leases valid at once fail {@code allowed}, with those leases.
     *
     * @param holds   the leases of one name
     * @param allowed whether a set of leases valid at once is allowed
     * @return the leases valid together at the first violation, or an empty list
     */
    static List<History.Hold> firstViolation(List<History.Hold> holds, Predicate<List<History.Hold>> allowed) {
        List<long[]> points = new ArrayList<>(); // time, +1 start / -1 end, index
        for (int i = 0; i < holds.size(); i++) {
            History.Hold h = holds.get(i);
            long start = h.grant().t();
            long end = h.validEnd();
            if (end > start) {
                points.add(new long[] {start, 1, i});
                points.add(new long[] {end, -1, i});
            }
        }
        // at one instant ends come before starts: a lease handed over exactly at the other's end is not an overlap
        points.sort(Comparator.<long[]>comparingLong(p -> p[0]).thenComparingLong(p -> p[1]));
        List<History.Hold> valid = new ArrayList<>();
        for (long[] p : points) {
            History.Hold h = holds.get((int) p[2]);
            if (p[1] < 0) {
                valid.remove(h);
            } else {
                valid.add(h);
                if (!allowed.test(valid)) {
                    return List.copyOf(valid);
                }
            }
        }
        return List.of();
    }

    static List<HistoryEvent> events(List<History.Hold> holds) {
        List<HistoryEvent> events = new ArrayList<>();
        for (History.Hold h : holds) {
            events.add(h.grant());
            if (h.end() != null) {
                events.add(h.end());
            }
        }
        return events;
    }
}
