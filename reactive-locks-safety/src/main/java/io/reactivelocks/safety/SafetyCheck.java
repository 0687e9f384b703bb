package io.reactivelocks.safety;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Judges a {@link SafetyRun.Outcome}.
 *
 * <p>Hard checks (a run with any of them non-zero fails):
 * <ul>
 *   <li><b>I1 stale writes accepted</b>: an accepted write whose previous accepted request on that
 *       name (in the arbiter's arrival order) is not the same worker's read with the same token —
 *       someone else's request got in between the read and the write of a critical section.</li>
 *   <li><b>I2 lost updates</b>: an accepted write whose value is not the replaced value + 1.</li>
 *   <li><b>I3 token order</b>: grants of a name, in the order they happened, whose token is not
 *       strictly greater than the previous grant's (server restarts included).</li>
 *   <li><b>I4 held past validity</b>: a lease a worker received from a hold stream more than
 *       {@link #LATENESS} after its own validity deadline (not frozen across it), or a hold that ended (lost, or released by its worker) more than
 *       {@link #LATENESS} after the last validity its stream reported, in a worker that was not
 *       frozen during that hold — its stream did not complete when the lease ran out.</li>
 *   <li><b>I5 left on the server</b>: locks of the run still held on the server after every worker
 *       stopped and the longest legitimate expiry (a killed worker's lease) passed.</li>
 * </ul>
 * Diagnostics: acquisitions, stale writes rejected (late writes the fencing stopped), overlaps
 * (two workers that believed they held the same name at once: must be &gt; 0 when a holder is
 * frozen, or the fault did not bite), takeover latency after a holder is killed, time to detect a
 * loss after a fault began, losses (under latency: false losses).
 */
public final class SafetyCheck {

    /** How late a loss may be reported by a running (not frozen) worker: timer and GC slack on a busy machine. */
    public static final Duration LATENESS = Duration.ofMillis(300);

    /**
     * The judgement of one run.
     *
     * @param outcome             what was judged
     * @param acquisitions        grants seen by the workers
     * @param staleWritesAccepted I1
     * @param lostUpdates         I2
     * @param tokenOrder          I3
     * @param heldPastValidity    I4
     * @param leftOnServer        I5
     * @param staleWritesRejected late writes the arbiter refused
     * @param staleReadsRejected  late reads the arbiter refused
     * @param rejectedWhileValid  refused writes whose worker still saw its lease as valid when sending
     * @param overlaps            pairs of belief intervals on one name by different workers that overlap
     * @param overlapMillis       their total overlap
     * @param losses              hold streams that completed (lease lost)
     * @param errors              acquires that failed (timeouts, store errors)
     * @param takeover            takeover latencies after a killed holder, ms
     * @param detect              loss detection times after a fault began, ms
     * @param acceptedWrites      accepted writes
     * @param problems            harness problems (fault found no target, worker did not stop)
     * @param details             what each I1–I4 violation was (the first few)
     */
    public record Verdict(SafetyRun.Outcome outcome, long acquisitions, long staleWritesAccepted, long lostUpdates, long tokenOrder,
                          long heldPastValidity, long leftOnServer, long staleWritesRejected, long staleReadsRejected,
                          long rejectedWhileValid, long overlaps, long overlapMillis, long losses, long errors,
                          List<Long> takeover, List<Long> detect, long acceptedWrites, List<String> problems, List<String> details) {

        /** @return true when I1–I5 all hold and the harness had no problem */
        public boolean safe() {
            return staleWritesAccepted == 0 && lostUpdates == 0 && tokenOrder == 0 && heldPastValidity == 0 && leftOnServer == 0
                    && problems.isEmpty();
        }

        /** @return the one-line summary printed per run */
        public String summary() {
            SafetyRun.Settings s = outcome.settings();
            return String.format(Locale.ROOT,
                    "%s %s: acquisitions %d, stale writes accepted %d, lost updates %d, token order violations %d, "
                            + "held past validity %d, left on server %d | stale writes rejected %d, overlaps %d (%d ms), "
                            + "takeover p50/p99 %s/%s ms, loss detected p50/p99 %s/%s ms, losses %d (%.2f%%), failed acquires %d, faults %d%s",
                    s.backend().name().toLowerCase(Locale.ROOT), s.fault().label(), acquisitions, staleWritesAccepted, lostUpdates,
                    tokenOrder, heldPastValidity, leftOnServer, staleWritesRejected, overlaps, overlapMillis,
                    pct(takeover, 50), pct(takeover, 99), pct(detect, 50), pct(detect, 99), losses,
                    acquisitions == 0 ? 0.0 : 100.0 * losses / acquisitions, errors, outcome.applied().size(),
                    problems.isEmpty() ? "" : " | problems: " + String.join("; ", problems));
        }
    }

    private SafetyCheck() {
    }

    /**
     * @param values    values
     * @param percentile 0..100
     * @return the nearest-rank percentile, or "-" when there are none
     */
    static String pct(List<Long> values, int percentile) {
        if (values.isEmpty()) {
            return "-";
        }
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int rank = (int) Math.ceil(percentile / 100.0 * sorted.size());
        return Long.toString(sorted.get(Math.max(0, rank - 1)));
    }

    /**
     * Judges a run.
     *
     * @param o the outcome
     * @return the verdict
     */
    public static Verdict judge(SafetyRun.Outcome o) {
        List<String> problems = new ArrayList<>(o.problems());
        if (o.applied().isEmpty()) {
            problems.add("no fault was applied");
        }

        // I1, I2 and the arbiter's diagnostics, per name in arrival order
        long staleAccepted = 0;
        long lost = 0;
        long staleWrites = 0;
        long staleReads = 0;
        long rejectedWhileValid = 0;
        long acceptedWrites = 0;
        Map<String, Arbiter.Op> lastAccepted = new HashMap<>();
        List<String> details = new ArrayList<>();
        for (Arbiter.Op op : o.ops()) {
            if (!op.accepted()) {
                if (op.write()) {
                    staleWrites++;
                    if (op.validAtSend()) {
                        rejectedWhileValid++;
                    }
                } else {
                    staleReads++;
                }
                continue;
            }
            Arbiter.Op previous = lastAccepted.put(op.name(), op);
            if (op.write()) {
                acceptedWrites++;
                if (previous == null || previous.write() || previous.worker() != op.worker() || previous.token() != op.token()) {
                    staleAccepted++;
                    detail(details, "I1: write #" + op.seq() + " of " + op.name() + " by worker " + op.worker() + " (token "
                            + op.token() + ") accepted after " + (previous == null ? "nothing" : (previous.write() ? "write #" : "read #")
                            + previous.seq() + " by worker " + previous.worker() + " (token " + previous.token() + ")"));
                }
                if (op.value() != op.previous() + 1) {
                    lost++;
                    detail(details, "I2: write #" + op.seq() + " of " + op.name() + " set " + op.value() + " over " + op.previous());
                }
            }
        }

        // I3: grants per name in the order they happened
        Map<String, List<WorkerProcess.Event>> grants = new HashMap<>();
        long acquisitions = 0;
        long vEmissions = 0;
        long errors = 0;
        for (WorkerProcess.Event e : o.events()) {
            switch (e.type()) {
                case 'G' -> {
                    acquisitions++;
                    grants.computeIfAbsent(e.name(), n -> new ArrayList<>()).add(e);
                }
                case 'V' -> {
                    // a frozen worker receives, on resuming, what the engine handed over before the freeze
                    if (lateEmission(o, e)) {
                        vEmissions++;
                    }
                }
                case 'X' -> errors++;
                default -> {
                }
            }
        }
        long tokenOrder = 0;
        for (List<WorkerProcess.Event> g : grants.values()) {
            g.sort(Comparator.comparingLong(WorkerProcess.Event::nanos));
            for (int i = 1; i < g.size(); i++) {
                if (g.get(i).token() <= g.get(i - 1).token()) {
                    tokenOrder++;
                    detail(details, "I3: grant of " + g.get(i).name() + " to worker " + g.get(i).worker() + " with token "
                            + g.get(i).token() + " after token " + g.get(i - 1).token() + " (worker " + g.get(i - 1).worker() + ")");
                }
            }
        }
        for (WorkerProcess.Event e : o.events()) {
            if (e.type() == 'V' && lateEmission(o, e)) {
                detail(details, "I4: worker " + e.worker() + " got a lease of " + e.name() + " (token " + e.token() + ") "
                        + Duration.ofNanos(e.nanos() - e.validUntil()).toMillis() + " ms after its validity");
            }
        }

        // belief intervals: from a grant to the end of that hold (or the worker's death / the run's end)
        List<Interval> intervals = intervals(o);
        long late = 0;
        long losses = 0;
        for (Interval i : intervals) {
            if (i.lost) {
                losses++;
            }
            boolean ended = i.lost || i.released;
            if (ended && !frozenDuring(o, i.worker, i.start, i.end) && i.end - i.validUntil > LATENESS.toNanos()) {
                late++;
                String reason = o.events().stream()
                        .filter(e -> e.type() == 'L' && e.worker() == i.worker && e.name().equals(i.name) && e.token() == i.token)
                        .map(e -> "lost " + Duration.ofNanos(e.nanos() - i.validUntil).toMillis() + " ms after validity: " + e.how())
                        .findFirst().orElse("no loss reported by the engine");
                detail(details, "I4: worker " + i.worker + " held " + i.name + " (token " + i.token + ") until "
                        + Duration.ofNanos(i.end - i.validUntil).toMillis() + " ms after its validity, ended "
                        + (i.lost ? "by the stream completing" : "by the worker releasing") + "; " + reason);
            }
        }
        long overlaps = 0;
        long overlapNanos = 0;
        for (int a = 0; a < intervals.size(); a++) {
            for (int b = a + 1; b < intervals.size(); b++) {
                Interval x = intervals.get(a);
                Interval y = intervals.get(b);
                if (x.worker != y.worker && x.name.equals(y.name)) {
                    long from = Math.max(x.start, y.start);
                    long to = Math.min(x.end, y.end);
                    if (to > from) {
                        overlaps++;
                        overlapNanos += to - from;
                    }
                }
            }
        }

        // takeover after a killed holder; loss detection after a fault began
        List<Long> takeover = new ArrayList<>();
        List<Long> detect = new ArrayList<>();
        for (SafetyRun.Applied a : o.applied()) {
            if (a.fault() == Fault.KILL_WORKER) {
                for (String name : a.names()) {
                    o.events().stream()
                            .filter(e -> e.type() == 'G' && e.name().equals(name) && e.worker() != a.worker() && e.nanos() > a.start())
                            .mapToLong(WorkerProcess.Event::nanos).min()
                            .ifPresent(t -> takeover.add(Duration.ofNanos(t - a.start()).toMillis()));
                }
            }
            if (a.fault() == Fault.PAUSE_SERVER || a.fault() == Fault.RESTART_SERVER || a.fault() == Fault.PARTITION_WORKER
                    || a.fault() == Fault.KILL_LEADER || a.fault() == Fault.FAILOVER || a.fault() == Fault.PARTITION_LEADER) {
                for (Interval i : intervals) {
                    boolean hit = a.worker() < 0 || a.worker() == i.worker;
                    if (hit && i.lost && i.start < a.start() && i.end > a.start()) {
                        detect.add(Duration.ofNanos(i.end - a.start()).toMillis());
                    }
                }
            }
        }
        return new Verdict(o, acquisitions, staleAccepted, lost, tokenOrder, vEmissions + late, Math.max(0, o.heldAfter()),
                staleWrites, staleReads, rejectedWhileValid, overlaps, Duration.ofNanos(overlapNanos).toMillis(), losses, errors,
                takeover, detect, acceptedWrites, problems, details);
    }

    private static void detail(List<String> details, String line) {
        if (details.size() < 20) {
            details.add(line);
        }
    }

    /** One hold as its worker believed it. */
    record Interval(int worker, String name, long token, long start, long end, boolean lost, boolean released, long validUntil) {
    }

    static List<Interval> intervals(SafetyRun.Outcome o) {
        Map<String, WorkerProcess.Event> open = new HashMap<>();
        List<Interval> out = new ArrayList<>();
        for (WorkerProcess.Event e : o.events()) {
            String key = e.worker() + "/" + e.name();
            if (e.type() == 'G') {
                open.put(key, e);
            } else if (e.type() == 'E') {
                WorkerProcess.Event g = open.remove(key);
                if (g != null) {
                    out.add(new Interval(e.worker(), e.name(), g.token(), g.nanos(), e.nanos(), e.how().equals("lost"),
                            e.how().equals("released"), e.validUntil()));
                }
            }
        }
        for (WorkerProcess.Event g : open.values()) {
            long end = o.endNanos();
            for (SafetyRun.Applied a : o.applied()) {
                if (a.fault() == Fault.KILL_WORKER && a.worker() == g.worker()) {
                    end = a.start();
                }
            }
            out.add(new Interval(g.worker(), g.name(), g.token(), g.nanos(), Math.max(g.nanos(), end), false, false, g.validUntil()));
        }
        out.sort(Comparator.comparingLong(Interval::start));
        return out;
    }

    /**
     * A lease the worker received past its validity by more than {@link #LATENESS} (the worker
     * stamps it on its own thread after a hand-over, so scheduling slack is measured too, as for
     * the end of a hold), in a worker that was not frozen across that deadline.
     */
    private static boolean lateEmission(SafetyRun.Outcome o, WorkerProcess.Event e) {
        return e.nanos() - e.validUntil() > LATENESS.toNanos() && !frozenDuring(o, e.worker(), e.validUntil(), e.nanos());
    }

    private static boolean frozenDuring(SafetyRun.Outcome o, int worker, long start, long end) {
        for (SafetyRun.Applied a : o.applied()) {
            if (a.fault() == Fault.PAUSE_WORKER && a.worker() == worker && a.start() < end && a.end() > start) {
                return true;
            }
        }
        return false;
    }
}
