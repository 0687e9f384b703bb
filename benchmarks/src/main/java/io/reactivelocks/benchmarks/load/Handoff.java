package io.reactivelocks.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;
import reactor.core.Disposable;

/**
 * B3: contended handoff. One name is held; {@code n} waiters queue on it; then the holder
 * releases and each waiter, once granted, releases at once (and does not come back), so the
 * lock travels down a chain of {@code n} handoffs. Measured per handoff: the time from the
 * previous holder's call to release to the next holder's grant (System.nanoTime in this JVM),
 * and the server's request count over the whole chain divided by {@code n} (the last grantee
 * releases only after the count was read).
 */
final class Handoff {

    /** One chain. */
    record Chain(Histogram latencies, int grants, int waiters, BackendBench.Counts delta, String error) {
        boolean complete() {
            return grants == waiters && error == null;
        }
    }

    /** All chains of one contender at one waiter count. */
    static final class Cell {
        final Contender contender;
        final int waiters;
        final List<Chain> chains = new ArrayList<>();

        Cell(Contender contender, int waiters) {
            this.contender = contender;
            this.waiters = waiters;
        }

        Histogram merged() {
            Histogram h = new Histogram(3);
            chains.forEach(c -> h.add(c.latencies()));
            return h;
        }

        double countedPerHandoff(long overhead) {
            return Stats.median(chains.stream().filter(Chain::complete)
                    .map(c -> (double) (c.delta().counted() - overhead) / c.waiters()).toList());
        }

        double executedPerHandoff(long overhead) {
            return Stats.median(chains.stream().filter(c -> c.complete() && c.delta().executed() >= 0)
                    .map(c -> (double) (c.delta().executed() - overhead) / c.waiters()).toList());
        }

        long incomplete() {
            return chains.stream().filter(c -> !c.complete()).count();
        }

        String error() {
            return chains.stream().map(Chain::error).filter(e -> e != null).findFirst().orElse(null);
        }
    }

    /** Results of one backend. */
    static final class Result {
        final BackendBench bench;
        final Map<Integer, List<Cell>> byWaiters = new LinkedHashMap<>();
        Histogram rtt;
        long overheadCounted;
        long overheadExecuted;

        Result(BackendBench bench) {
            this.bench = bench;
        }
    }

    private static final AtomicInteger SEQ = new AtomicInteger();

    private Handoff() {
    }

    static Result run(BackendBench bench, List<Contender> contenders, Settings s) {
        Result result = new Result(bench);
        List<Contender> waiting = contenders.stream().filter(Contender::supportsWaiting).toList();
        // what reading the counters costs the server (e.g. Redis counts the INFO itself)
        BackendBench.Counts a = bench.counts();
        BackendBench.Counts b = bench.counts();
        result.overheadCounted = b.minus(a).counted();
        result.overheadExecuted = Math.max(0, b.minus(a).executed());
        // warm-up chains for B1's first warm-up time per contender (at least one): run alone (--only b3), a single
        // chain left the JIT cold for the first chains of 16, whose p50 then fell by half from chain 1 to chain 10
        for (Contender c : waiting) {
            long until = System.nanoTime() + s.firstWarmup().toNanos();
            do {
                Chain w = chain(bench, c, s.waiters()[0]);
                Log.info("  B3 %s warm-up %-30s %s", bench.key, c.label, describe(w, result));
            } while (System.nanoTime() < until);
        }
        Histogram rtt = bench.roundTrip(s.rttSamples());
        for (int i = 0; i < s.waiters().length; i++) {
            int n = s.waiters()[i];
            List<Cell> cells = new ArrayList<>();
            for (Contender c : waiting) {
                cells.add(new Cell(c, n));
            }
            result.byWaiters.put(n, cells);
            for (int k = 0; k < s.chains()[i]; k++) {
                for (int j = 0; j < cells.size(); j++) {
                    Cell cell = cells.get((j + k) % cells.size());
                    Chain chain = chain(bench, cell.contender, n);
                    cell.chains.add(chain);
                    Log.info("  B3 %s n=%d chain %d %-30s %s", bench.key, n, k + 1, cell.contender.label, describe(chain, result));
                }
            }
        }
        rtt.add(bench.roundTrip(s.rttSamples()));
        result.rtt = rtt;
        return result;
    }

    static String describe(Chain c, Result r) {
        return String.format(java.util.Locale.ROOT, "%d/%d grants p50 %s µs p99 %s µs, %.1f req/handoff%s", c.grants(),
                c.waiters(), Stats.us(c.latencies().getValueAtPercentile(50)), Stats.us(c.latencies().getValueAtPercentile(99)),
                (double) (c.delta().counted() - r.overheadCounted) / c.waiters(), c.error() == null ? "" : "  ERROR " + c.error());
    }

    static Chain chain(BackendBench bench, Contender contender, int n) {
        String name = "b3." + contender.id + "." + n + "." + SEQ.incrementAndGet();
        contender.prepare(n + 1);
        try {
            return contender.blocking() ? blockingChain(bench, contender, n, name) : reactiveChain(bench, contender, n, name);
        } finally {
            contender.finish();
        }
    }

    private static Duration settle(int n) {
        return Duration.ofMillis(300 + 10L * n);
    }

    private static Duration timeout(int n) {
        return Duration.ofSeconds(30 + n / 5);
    }

    private static Chain reactiveChain(BackendBench bench, Contender contender, int n, String name) {
        SynchronizedHistogram lat = new SynchronizedHistogram(3);
        AtomicLong lastRelease = new AtomicLong();
        AtomicInteger grants = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(1);
        AtomicReference<Contender.Held> last = new AtomicReference<>();
        AtomicReference<String> error = new AtomicReference<>();
        Contender.Held holder = contender.acquireWaiting(name, 0).block(Duration.ofSeconds(30));
        List<Disposable> waiters = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            waiters.add(contender.acquireWaiting(name, i).subscribe(h -> {
                long t = System.nanoTime();
                lat.recordValue(Math.max(0, t - lastRelease.get()));
                if (grants.incrementAndGet() == n) {
                    last.set(h);
                    all.countDown();
                } else {
                    lastRelease.set(System.nanoTime());
                    h.release().subscribe(null, e -> error.compareAndSet(null, "release: " + e));
                }
            }, e -> error.compareAndSet(null, "acquire: " + e)));
        }
        sleep(settle(n));
        BackendBench.Counts before = bench.counts();
        lastRelease.set(System.nanoTime());
        holder.release().subscribe(null, e -> error.compareAndSet(null, "release: " + e));
        await(all, timeout(n));
        BackendBench.Counts delta = bench.counts().minus(before);
        Contender.Held h = last.get();
        if (h != null) {
            h.release().block(Duration.ofSeconds(30));
        } else {
            waiters.forEach(Disposable::dispose);
            sleep(Duration.ofSeconds(1));
        }
        return new Chain(lat.copy(), grants.get(), n, delta, error.get());
    }

    private static Chain blockingChain(BackendBench bench, Contender contender, int n, String name) {
        SynchronizedHistogram lat = new SynchronizedHistogram(3);
        AtomicLong lastRelease = new AtomicLong();
        AtomicInteger grants = new AtomicInteger();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch all = new CountDownLatch(1);
        CountDownLatch counted = new CountDownLatch(1);
        AtomicReference<String> error = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        threads.add(daemon("b3-holder", () -> {
            try {
                Contender.Held h = contender.acquireWaitingBlocking(name, 0);
                held.countDown();
                go.await();
                lastRelease.set(System.nanoTime());
                h.releaseBlocking();
            } catch (Exception e) {
                error.compareAndSet(null, "holder: " + e);
                held.countDown();
            }
        }));
        await(held, Duration.ofSeconds(30));
        for (int i = 1; i <= n; i++) {
            int worker = i;
            threads.add(daemon("b3-waiter-" + i, () -> {
                try {
                    Contender.Held h = contender.acquireWaitingBlocking(name, worker);
                    long t = System.nanoTime();
                    lat.recordValue(Math.max(0, t - lastRelease.get()));
                    if (grants.incrementAndGet() == n) {
                        all.countDown();
                        counted.await();
                    } else {
                        lastRelease.set(System.nanoTime());
                    }
                    h.releaseBlocking();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    error.compareAndSet(null, "waiter: " + e);
                }
            }));
        }
        sleep(settle(n));
        BackendBench.Counts before = bench.counts();
        go.countDown();
        await(all, timeout(n));
        BackendBench.Counts delta = bench.counts().minus(before);
        counted.countDown();
        for (Thread t : threads) {
            try {
                t.join(5000);
                if (t.isAlive()) {
                    t.interrupt();
                    t.join(5000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return new Chain(lat.copy(), grants.get(), n, delta, error.get());
    }

    private static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch, Duration d) {
        try {
            latch.await(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
