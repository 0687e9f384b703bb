package io.reactivelocks.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * B1: uncontended acquire + release, closed loop. Each of {@code c} workers owns one lock name
 * and repeats acquire-then-release on it; the figure is completed pairs per second, and the
 * latency of one pair. At each concurrency level the contenders run in rounds, in an order
 * rotated every round, so drift of a shared machine hits all of them alike.
 */
final class Uncontended {

    /** One measured run of one contender. */
    record Run(double opsPerSec, long ops, long errors, double p50, double p99, double countedPerOp,
               double executedPerOp, double cpuPerOp, double serverCpuPerOp, double allocPerOp, String error) {
    }

    /** All rounds of one contender at one level. */
    static final class Cell {
        final Contender contender;
        final int concurrency;
        final List<Run> rounds = new ArrayList<>();

        Cell(Contender contender, int concurrency) {
            this.contender = contender;
            this.concurrency = concurrency;
        }

        double ops() {
            return Stats.median(rounds.stream().map(Run::opsPerSec).toList());
        }

        double p50() {
            return Stats.median(rounds.stream().map(Run::p50).toList());
        }

        double p99() {
            return Stats.median(rounds.stream().map(Run::p99).toList());
        }

        double countedPerOp() {
            return Stats.median(rounds.stream().map(Run::countedPerOp).toList());
        }

        double executedPerOp() {
            return Stats.median(rounds.stream().map(Run::executedPerOp).toList());
        }

        /** @return bytes this JVM allocated (all threads) per pair, median of rounds */
        double allocPerOp() {
            return Stats.median(rounds.stream().map(Run::allocPerOp).toList());
        }

        /** @return this JVM's CPU time (all threads) per pair, nanoseconds, median of rounds */
        double cpuPerOp() {
            return Stats.median(rounds.stream().map(Run::cpuPerOp).toList());
        }

        /**
         * @return the server's CPU time (its process and descendants, {@link ServerCpu}) per pair, nanoseconds,
         *         median of rounds; NaN when the server is not a local process
         */
        double serverCpuPerOp() {
            return Stats.median(rounds.stream().map(Run::serverCpuPerOp).toList());
        }

        long errors() {
            return rounds.stream().mapToLong(Run::errors).sum();
        }

        String error() {
            return rounds.stream().map(Run::error).filter(e -> e != null).findFirst().orElse(null);
        }

        /** @return the median over rounds of this cell's throughput divided by {@code other}'s in the same round */
        double ratioTo(Cell other) {
            return Stats.median(roundRatios(other));
        }

        /** @return this cell's throughput ÷ {@code other}'s, round by round (the rounds run back to back) */
        List<Double> roundRatios(Cell other) {
            List<Double> r = new ArrayList<>();
            for (int i = 0; i < Math.min(rounds.size(), other.rounds.size()); i++) {
                if (other.rounds.get(i).opsPerSec() > 0) {
                    r.add(rounds.get(i).opsPerSec() / other.rounds.get(i).opsPerSec());
                }
            }
            return r;
        }

        /**
         * @return the median ratio to {@code other} and, with more than one round, the lowest and highest round's:
         *     "0.93× (rounds 0.85–1.02)" — how far one round of this shared machine moves the figure
         */
        String ratioWithSpread(Cell other) {
            List<Double> r = roundRatios(other);
            String median = Stats.ratio(Stats.median(r));
            if (r.size() < 2) {
                return median;
            }
            double lo = r.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
            double hi = r.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
            return median + String.format(java.util.Locale.ROOT, " (rounds %.2f–%.2f)", lo, hi);
        }
    }

    /** Results of one backend: level → cells in contender order. */
    static final class Result {
        final BackendBench bench;
        final Map<Integer, List<Cell>> levels = new LinkedHashMap<>();

        Result(BackendBench bench) {
            this.bench = bench;
        }
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    private Uncontended() {
    }

    /**
     * Workers of the first level's JIT warm-up. At one worker a store answers one to two thousand pairs a second, so
     * a 4 s warm-up showed each per-pair method 4,000–8,000 times: below C2's thresholds (5,000 invocations, 15,000
     * with loops), and the measured rounds that followed still sped up one after the other — the contender with
     * more per-pair code the most (ours on ZooKeeper: CPU per pair 282, 208, 202, 140, 103 µs over the five
     * rounds; the floor 312, 97, 93, 83, 80). With 16 workers the same time runs 4–8 times as many pairs.
     */
    static final int JIT_WORKERS = 16;

    static Result run(BackendBench bench, List<Contender> all, Settings s) {
        Result result = new Result(bench);
        List<Contender> contenders = all.stream().filter(Contender::cycles).toList();
        boolean first = true;
        for (int c : s.concurrencies()) {
            List<Cell> cells = new ArrayList<>();
            for (Contender k : contenders) {
                cells.add(new Cell(k, c));
            }
            result.levels.put(c, cells);
            for (Contender k : contenders) {
                if (first) {
                    Run jit = once(bench, k, Math.max(c, JIT_WORKERS), s.firstWarmup());
                    Log.info("  B1 %s c=%d JIT warm-up (%d workers) %-30s %s", bench.key, c, Math.max(c, JIT_WORKERS), k.label,
                            describe(jit));
                }
                Run w = once(bench, k, c, s.warmup());
                Log.info("  B1 %s c=%d warm-up %-45s %s", bench.key, c, k.label, describe(w));
            }
            first = false;
            for (int r = 0; r < s.rounds(); r++) {
                for (int i = 0; i < cells.size(); i++) {
                    Cell cell = cells.get((i + r) % cells.size());
                    Run run = once(bench, cell.contender, c, s.round());
                    cell.rounds.add(run);
                    Log.info("  B1 %s c=%d round %d %-45s %s", bench.key, c, r + 1, cell.contender.label, describe(run));
                }
            }
        }
        return result;
    }

    static String describe(Run r) {
        return String.format(java.util.Locale.ROOT, "%10.0f ops/s p50 %8s µs p99 %8s µs  %.2f req/op  CPU %s µs/op  server CPU %s µs/op%s",
                r.opsPerSec(), Stats.us(r.p50()), Stats.us(r.p99()), r.countedPerOp(), Stats.us(r.cpuPerOp()),
                Stats.us(r.serverCpuPerOp()),
                r.errors() > 0 ? "  ERRORS " + r.errors() + ": " + r.error() : "");
    }

    /** One closed-loop run of {@code contender} with {@code c} workers for {@code length}, one name per worker. */
    static Run once(BackendBench bench, Contender contender, int c, Duration length) {
        String[] names = new String[c];
        for (int w = 0; w < c; w++) {
            names[w] = "b1." + contender.id + "." + c + "." + w;
        }
        return once(bench, contender, c, length, names);
    }

    /** @return bytes allocated so far by the live threads of this JVM */
    private static long allocated() {
        long[] ids = THREADS.getAllThreadIds();
        long sum = 0;
        for (long b : THREADS.getThreadAllocatedBytes(ids)) {
            sum += Math.max(0, b);
        }
        return sum;
    }

    /**
     * One closed-loop run of {@code contender} with {@code c} workers for {@code length}.
     *
     * @param names the lock name of each worker (B8 gives them all one name for a shared primitive)
     */
    static Run once(BackendBench bench, Contender contender, int c, Duration length, String[] names) {
        contender.prepare(c);
        Histogram[] h = new Histogram[c];
        for (int w = 0; w < c; w++) {
            h[w] = new Histogram(3);
        }
        LongAdder workerAlloc = new LongAdder();
        LongAdder errors = new LongAdder();
        AtomicReference<String> error = new AtomicReference<>();
        BackendBench.Counts before = bench.counts();
        long cpu0 = OS.getProcessCpuTime();
        long serverCpu0 = bench.serverCpuNanos();
        long alloc0 = allocated();
        long start = System.nanoTime();
        long deadline = start + length.toNanos();
        if (contender.blocking()) {
            runBlocking(contender, c, names, h, deadline, errors, error, workerAlloc);
        } else {
            Flux.range(0, c)
                    .flatMap(w -> Mono.defer(() -> {
                        long t0 = System.nanoTime();
                        return contender.cycle(names[w], w)
                                .doOnSuccess(v -> h[w].recordValue(System.nanoTime() - t0))
                                .onErrorResume(e -> {
                                    errors.increment();
                                    error.compareAndSet(null, Log.describe(e));
                                    return Mono.empty();
                                });
                    }).repeat(() -> System.nanoTime() < deadline).then(), c)
                    .blockLast(length.plusSeconds(120));
        }
        long end = System.nanoTime();
        long cpu = OS.getProcessCpuTime() - cpu0;
        long serverCpu1 = bench.serverCpuNanos();
        double serverCpu = serverCpu0 < 0 || serverCpu1 < 0 ? Double.NaN : serverCpu1 - serverCpu0;
        // the live threads' growth (a blocking run's workers are gone by now: they added their own share)
        long alloc = Math.max(0, allocated() - alloc0) + workerAlloc.sum();
        BackendBench.Counts delta = bench.counts().minus(before);
        contender.finish();
        Histogram all = new Histogram(3);
        for (Histogram x : h) {
            all.add(x);
        }
        long ops = all.getTotalCount();
        double seconds = (end - start) / 1e9;
        return new Run(ops / seconds, ops, errors.sum(), all.getValueAtPercentile(50), all.getValueAtPercentile(99),
                ops == 0 ? Double.NaN : (double) delta.counted() / ops,
                ops == 0 || delta.executed() < 0 ? Double.NaN : (double) delta.executed() / ops,
                ops == 0 ? Double.NaN : (double) cpu / ops, ops == 0 ? Double.NaN : serverCpu / ops,
                ops == 0 ? Double.NaN : (double) alloc / ops, error.get());
    }

    private static void runBlocking(Contender contender, int c, String[] names, Histogram[] h, long deadline,
                                    LongAdder errors, AtomicReference<String> error, LongAdder workerAlloc) {
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(c, r -> {
            Thread t = new Thread(r, "b1-" + contender.id + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int w = 0; w < c; w++) {
                int worker = w;
                all.add(pool.submit(() -> {
                    long a0 = THREADS.getCurrentThreadAllocatedBytes();
                    while (System.nanoTime() < deadline) {
                        long t0 = System.nanoTime();
                        try {
                            contender.cycleBlocking(names[worker], worker);
                            h[worker].recordValue(System.nanoTime() - t0);
                        } catch (Exception e) {
                            errors.increment();
                            error.compareAndSet(null, Log.describe(e));
                        }
                    }
                    workerAlloc.add(THREADS.getCurrentThreadAllocatedBytes() - a0);
                }));
            }
            for (Future<?> f : all) {
                f.get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000) + 120_000, TimeUnit.MILLISECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("blocking run of " + contender + " failed", e);
        } finally {
            pool.shutdownNow();
            try {
                pool.awaitTermination(10, TimeUnit.SECONDS); // gone before the allocation count: they added their own
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
