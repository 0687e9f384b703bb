package io.reactivelocks.benchmarks.load;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * B8: the new primitives (semaphore, read-write lock, fair lock) against the anchors that have
 * them (Redisson, Curator), in the same run and the same way as B1 and B3: at each concurrency the
 * contenders of one primitive run in rounds, in an order rotated every round, and a ratio is the
 * median over rounds of ours ÷ theirs in the same round. Throughput: {@code c} closed-loop workers
 * repeat acquire + release — on one shared name for the semaphore (N = max(1, c/2) permits, so
 * half the workers wait at any time) and for the read side (readers share), on a name per worker
 * for the write side and the fair lock (as B1). Handoff: B3's chain (one holder, then waiters
 * granted one by one) with the semaphore at N = 1.
 */
final class Primitives {

    /**
     * The contenders of one primitive on one backend, ours first.
     *
     * @param key         short id (sem, read, write, fair)
     * @param title       shown in the report
     * @param oneName     whether every worker uses the same name
     * @param counting    whether N = max(1, c/2) permits (semaphores)
     * @param handoff     whether the B3 chain is measured too
     * @param contenders  ours first, then the anchors; opened now, closed by the run
     */
    record Group(String key, String title, boolean oneName, boolean counting, boolean handoff, List<Contender> contenders) {
    }

    /** The results of one group. */
    static final class Result {
        final BackendBench bench;
        final Group group;
        final Map<Integer, List<Uncontended.Cell>> levels = new LinkedHashMap<>();
        final List<Handoff.Cell> handoffs = new ArrayList<>();
        long overheadCounted;
        Histogram rtt;

        Result(BackendBench bench, Group group) {
            this.bench = bench;
            this.group = group;
        }
    }

    private static final AtomicInteger SEQ = new AtomicInteger();

    private Primitives() {
    }

    /** @return the semaphore's N at {@code c} workers */
    static int permitsAt(int c) {
        return Math.max(1, c / 2);
    }

    static List<Result> run(BackendBench bench, Settings s) {
        List<Result> results = new ArrayList<>();
        List<Group> groups = bench.primitives();
        try {
            BackendBench.Counts a = bench.counts();
            BackendBench.Counts b = bench.counts();
            long overhead = b.minus(a).counted();
            Histogram rtt = bench.roundTrip(s.rttSamples());
            for (Group g : groups) {
                Result r = new Result(bench, g);
                r.overheadCounted = overhead;
                r.rtt = rtt;
                results.add(r);
                try {
                    throughput(bench, g, r, s);
                    if (g.handoff()) {
                        handoff(bench, g, r, s);
                    }
                } catch (RuntimeException e) {
                    Log.info("  B8 %s %s FAILED: %s", bench.key, g.key(), e);
                    e.printStackTrace();
                }
            }
        } finally {
            for (Group g : groups) {
                for (Contender c : g.contenders()) {
                    try {
                        c.close();
                    } catch (RuntimeException e) {
                        Log.info("closing %s: %s", c, e);
                    }
                }
            }
        }
        return results;
    }

    private static String[] names(Group g, Contender k, int c) {
        String base = "b8." + g.key() + "." + k.id + "." + c + "." + SEQ.incrementAndGet();
        String[] names = new String[c];
        for (int w = 0; w < c; w++) {
            names[w] = g.oneName() ? base : base + "." + w;
        }
        return names;
    }

    private static Uncontended.Run once(BackendBench bench, Group g, Contender k, int c, java.time.Duration length) {
        k.permits(g.counting() ? permitsAt(c) : 1);
        return Uncontended.once(bench, k, c, length, names(g, k, c));
    }

    private static void throughput(BackendBench bench, Group g, Result r, Settings s) {
        boolean first = true;
        for (int c : s.concurrencies()) {
            List<Uncontended.Cell> cells = new ArrayList<>();
            for (Contender k : g.contenders()) {
                cells.add(new Uncontended.Cell(k, c));
            }
            r.levels.put(c, cells);
            for (Contender k : g.contenders()) {
                // a primitive's code paths are cold when its group starts (B1 warmed only the mutex's): B1's JIT
                // warm-up (Uncontended.JIT_WORKERS), then B1's first warm-up at c, so the first level is not measured
                // on a half-compiled path
                if (first) {
                    int jitWorkers = Math.max(c, Uncontended.JIT_WORKERS);
                    Uncontended.Run jit = once(bench, g, k, jitWorkers, s.firstWarmup());
                    Log.info("  B8 %s %s c=%d JIT warm-up (%d workers) %-25s %s", bench.key, g.key(), c, jitWorkers, k.label,
                            Uncontended.describe(jit));
                }
                Uncontended.Run w = once(bench, g, k, c, first ? s.firstWarmup() : s.warmup());
                Log.info("  B8 %s %s c=%d warm-up %-40s %s", bench.key, g.key(), c, k.label, Uncontended.describe(w));
            }
            first = false;
            for (int round = 0; round < s.rounds(); round++) {
                for (int i = 0; i < cells.size(); i++) {
                    Uncontended.Cell cell = cells.get((i + round) % cells.size());
                    Uncontended.Run run = once(bench, g, cell.contender, c, s.round());
                    cell.rounds.add(run);
                    Log.info("  B8 %s %s c=%d round %d %-40s %s", bench.key, g.key(), c, round + 1, cell.contender.label,
                            Uncontended.describe(run));
                }
            }
        }
    }

    private static void handoff(BackendBench bench, Group g, Result r, Settings s) {
        int n = s.waiters()[0];
        Handoff.Result fmt = new Handoff.Result(bench);
        fmt.overheadCounted = r.overheadCounted;
        List<Contender> waiting = g.contenders().stream().filter(Contender::supportsWaiting).toList();
        for (Contender k : waiting) {
            k.permits(1);
            r.handoffs.add(new Handoff.Cell(k, n));
            Handoff.Chain w = Handoff.chain(bench, k, n);
            Log.info("  B8 %s %s handoff warm-up %-30s %s", bench.key, g.key(), k.label, Handoff.describe(w, fmt));
        }
        for (int chain = 0; chain < s.chains()[0]; chain++) {
            for (int j = 0; j < r.handoffs.size(); j++) {
                Handoff.Cell cell = r.handoffs.get((j + chain) % r.handoffs.size());
                Handoff.Chain c = Handoff.chain(bench, cell.contender, n);
                cell.chains.add(c);
                Log.info("  B8 %s %s n=%d chain %d %-30s %s", bench.key, g.key(), n, chain + 1, cell.contender.label,
                        Handoff.describe(c, fmt));
            }
        }
    }
}
