package io.reactivelocks.safety;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The FIFO check of the fair names of a run: what a fair lock promises, and only that.
 *
 * <p>A waiter's place in the line is fixed on the store when its grant request is processed (Redis:
 * its arrival score; PostgreSQL: its waiter row; etcd: its key's create revision; ZooKeeper: its
 * sequential node). The worker sees two moments of each request ({@link ObservedFairBackend}): when it
 * is about to be sent ({@code I}, before the store can have placed it) and when the store's answer
 * "queued" arrived ({@code A}, after it placed it). So when waiter x's place was acknowledged before
 * waiter y's request was even sent ({@code A(x) < I(y)}, with the last request of each wait, the one
 * whose answer led to its grant), x is ahead of y in the line and must be granted first; grants of a
 * name are ordered by their fencing tokens (strictly increasing on every store, I3), so y's token
 * must be above x's. A pair is judged when, besides, y asked before x's grant reached x's worker (both
 * waited at once) and both were granted; a wait that failed has no grant and is not judged.
 *
 * <p>Sound only where no queued waiter can lose its place: a waiter frozen, cut off or stalled by a
 * server fault has its entry expire by design (so that it does not block the line), and a restart of
 * a Redis without persistence forgets the line. So the faults of one worker (pause, partition,
 * kill: the harness catches that worker in a section, holding, never waiting) leave the whole run
 * judged except the hit worker's waits from the fault until two lease times after it (its client
 * re-opens its session then); under server faults and latency only the undisturbed part is judged:
 * before the first fault, and from two lease times after a fault ends until the next one begins.
 */
final class FifoCheck {

    /**
     * @param violations pairs granted out of line order
     * @param pairs      pairs judged
     */
    record Result(long violations, long pairs) {
    }

    /**
     * One wait of a fair name by a worker.
     *
     * @param worker  the worker
     * @param start   when the worker started to wait (Q)
     * @param asked   when the wait's last grant request was about to be sent (I), or the wait's start
     * @param inLine  when the store's "queued" answer to that request arrived (A), or {@code Long.MIN_VALUE}
     *                when that request was granted at once (never queued)
     * @param granted when the grant reached the worker (G)
     * @param token   the grant's token
     */
    record Wait(int worker, long start, long asked, long inLine, long granted, long token) {
        boolean queued() {
            return inLine != Long.MIN_VALUE;
        }
    }

    private FifoCheck() {
    }

    /**
     * Judges the fair names of a run.
     *
     * @param o       the run
     * @param details where a violation is described (the first few)
     * @return violations and pairs judged
     */
    static Result judge(SafetyRun.Outcome o, List<String> details) {
        long violations = 0;
        long pairs = 0;
        List<long[]> quiet = quietWindows(o);
        for (Map.Entry<String, List<Wait>> entry : waits(o).entrySet()) {
            List<Wait> w = entry.getValue();
            for (Wait x : w) {
                if (!x.queued() || recovering(o, x)) {
                    continue;
                }
                for (Wait y : w) {
                    // x was in line before y asked, and y asked before x had its grant
                    if (x == y || x.worker() == y.worker() || x.inLine() >= y.asked() || y.asked() >= x.granted()) {
                        continue;
                    }
                    if (recovering(o, y) || !inOneWindow(quiet, x, y)) {
                        continue;
                    }
                    pairs++;
                    if (y.token() < x.token()) {
                        violations++;
                        SafetyCheck.detail(details, "FIFO: on " + entry.getKey() + " worker " + x.worker() + " was in the line "
                                + Duration.ofNanos(y.asked() - x.inLine()).toMillis() + " ms before worker " + y.worker()
                                + " asked, but was granted after it (token " + x.token() + " after token " + y.token() + ")");
                    }
                }
            }
        }
        return new Result(violations, pairs);
    }

    /**
     * The waits of the fair names: a Q, the same worker's I and A events of that name, and its next G
     * (a wait that ended without a grant — an error, X — is dropped).
     *
     * @return waits by name
     */
    static Map<String, List<Wait>> waits(SafetyRun.Outcome o) {
        Map<String, List<Wait>> waits = new HashMap<>();
        Map<String, long[]> open = new HashMap<>(); // worker/name -> {start, asked, inLine}
        for (WorkerProcess.Event e : o.events()) {
            if (e.name() == null || SafetyCheck.primitiveOf(o, e.name()) != Primitive.FAIR) {
                if (e.type() == 'X') {
                    open.keySet().removeIf(k -> k.startsWith(e.worker() + "/"));
                }
                continue;
            }
            String key = e.worker() + "/" + e.name();
            switch (e.type()) {
                case 'Q' -> open.put(key, new long[] {e.nanos(), e.nanos(), Long.MIN_VALUE});
                case 'I' -> {
                    long[] wait = open.get(key);
                    if (wait != null) {
                        wait[1] = e.nanos();
                        wait[2] = Long.MIN_VALUE; // a new request: its place is not known yet
                    }
                }
                case 'A' -> {
                    long[] wait = open.get(key);
                    if (wait != null) {
                        wait[2] = e.nanos();
                    }
                }
                case 'G' -> {
                    long[] wait = open.remove(key);
                    if (wait != null) {
                        waits.computeIfAbsent(e.name(), n -> new ArrayList<>())
                                .add(new Wait(e.worker(), wait[0], wait[1], wait[2], e.nanos(), e.token()));
                    }
                }
                default -> {
                }
            }
        }
        return waits;
    }

    /**
     * The undisturbed windows: the whole run under faults of one worker, else before the first fault
     * and from two lease times after a fault to the next.
     */
    private static List<long[]> quietWindows(SafetyRun.Outcome o) {
        List<long[]> quiet = new ArrayList<>();
        long from = o.startNanos();
        long settle = o.settings().lease().toNanos() * 2;
        List<SafetyRun.Applied> applied = new ArrayList<>(o.applied());
        applied.removeIf(a -> a.fault() == Fault.PAUSE_WORKER || a.fault() == Fault.PARTITION_WORKER || a.fault() == Fault.KILL_WORKER);
        applied.sort(Comparator.comparingLong(SafetyRun.Applied::start));
        for (SafetyRun.Applied a : applied) {
            quiet.add(new long[] {from, a.start()});
            from = a.end() + settle;
        }
        quiet.add(new long[] {from, Long.MAX_VALUE});
        return quiet;
    }

    /** Whether both waits, from their start to their grant, lie in one undisturbed window. */
    private static boolean inOneWindow(List<long[]> quiet, Wait x, Wait y) {
        for (long[] q : quiet) {
            if (x.start() >= q[0] && y.start() >= q[0] && x.granted() <= q[1] && y.granted() <= q[1]) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a wait began while its worker was hit by a one-worker fault or within two lease times
     * after it (its client re-opening a session, its request late): such a wait is not judged.
     */
    private static boolean recovering(SafetyRun.Outcome o, Wait wait) {
        long settle = o.settings().lease().toNanos() * 2;
        for (SafetyRun.Applied a : o.applied()) {
            if (a.worker() == wait.worker() && wait.start() >= a.start() && wait.start() <= a.end() + settle) {
                return true;
            }
        }
        return false;
    }
}
