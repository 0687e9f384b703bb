package io.reactivelocks.safety;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * I6 of the semaphore names of a run, N permits (see {@link SafetyCheck}): (a) in the arbiter's
 * order, more than N sections open at once, or a token's section opened by two workers — a section
 * is open from its accepted read until its write, its {@code D} or the eviction of its token; (b)
 * more than N workers at once inside the validity their own permit's lease reported. Counts the
 * slots the arbiter evicted (frozen holders fenced) and the overlaps of beliefs (more than N
 * workers that believed they held a permit).
 */
final class PermitCheck {

    private final int permits;
    private final List<String> details;
    private final Map<String, Map<Long, Integer>> open = new HashMap<>();
    private long overflow;
    private long evictions;

    /**
     * @param permits N
     * @param details where violations are described
     */
    PermitCheck(int permits, List<String> details) {
        this.permits = permits;
        this.details = details;
    }

    /** A holder said it is done ({@code D}): its section is closed. */
    void done(Arbiter.Op op) {
        sections(op.name()).remove(op.token());
    }

    /** A refused request: the token's section, if any, is closed. */
    void refused(Arbiter.Op op) {
        sections(op.name()).remove(op.token());
    }

    /**
     * An accepted request of a semaphore name, in the arbiter's order.
     *
     * @return whether it was a write
     */
    boolean accepted(Arbiter.Op op) {
        Map<Long, Integer> sections = sections(op.name());
        if (op.previous() >= 0) {
            evictions++;
            sections.remove(op.previous());
        }
        if (op.write()) {
            sections.remove(op.token());
            return true;
        }
        Integer other = sections.put(op.token(), op.worker());
        if (other != null && other != op.worker()) {
            overflow++;
            SafetyCheck.detail(details, "I6: read #" + op.seq() + " of " + op.name() + " by worker " + op.worker() + " with token "
                    + op.token() + ", the token of worker " + other + "'s open section");
        }
        if (sections.size() > permits) {
            overflow++;
            SafetyCheck.detail(details, "I6: read #" + op.seq() + " of " + op.name() + " opened section " + sections.size() + " of " + permits);
        }
        return false;
    }

    /**
     * The holds of one semaphore name as the workers believed them: more than N at once is an
     * overlap (a diagnostic); more than N inside their leases' own validity is I6(b) — a validity cut
     * at an operator's force-release of the hold ({@link SafetyCheck#intervals}).
     *
     * @param of the holds of the name
     * @return {overlaps, their nanos}
     */
    long[] beliefs(List<SafetyCheck.Interval> of) {
        long[] over = overN(of, permits, false);
        long[] valid = overN(of, permits, true);
        if (valid[0] > 0) {
            overflow += valid[0];
            SafetyCheck.detail(details, "I6: " + valid[0] + " times more than " + permits + " workers inside their permits' validity on "
                    + of.get(0).name() + " (" + Duration.ofNanos(valid[1]).toMillis() + " ms)");
        }
        return over;
    }

    /** @return I6 */
    long overflow() {
        return overflow;
    }

    /** @return slots the arbiter evicted */
    long evictions() {
        return evictions;
    }

    private Map<Long, Integer> sections(String name) {
        return open.computeIfAbsent(name, n -> new HashMap<>());
    }

    /**
     * Times more than {@code permits} workers were in an interval of one name at once, and for how long.
     *
     * @param validOnly count each interval only until its lease's own validity ended
     * @return {episodes, nanos}
     */
    static long[] overN(List<SafetyCheck.Interval> of, int permits, boolean validOnly) {
        List<long[]> edges = new java.util.ArrayList<>();
        for (SafetyCheck.Interval i : of) {
            long end = validOnly ? i.validEnd() : i.end();
            if (end > i.start()) {
                edges.add(new long[] {i.start(), 1});
                edges.add(new long[] {end, -1});
            }
        }
        // ends before starts at the same instant: a hand-over is not an overlap
        edges.sort(java.util.Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
        long episodes = 0;
        long nanos = 0;
        int count = 0;
        long since = 0;
        for (long[] e : edges) {
            int before = count;
            count += (int) e[1];
            if (before <= permits && count > permits) {
                episodes++;
                since = e[0];
            } else if (before > permits && count <= permits) {
                nanos += e[0] - since;
            }
        }
        return new long[] {episodes, nanos};
    }
}
