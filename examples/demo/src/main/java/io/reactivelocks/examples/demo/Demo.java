package io.reactivelocks.examples.demo;

import io.reactivelocks.LockClient;
import io.reactivelocks.LockLostException;
import io.reactivelocks.LockOptions;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The README's first command: several simulated service instances (each its own
 * {@link LockClient}) contend for a few accounts guarded by fenced ledgers. One instance is
 * frozen (a stop-the-world pause) inside its critical section for longer than its lease; another
 * takes over, and the frozen one's late write is rejected by its stale fencing token.
 *
 * <p>Usage: {@code Demo [--duration=10s] [--workers=4] [--resources=3] [--backend=memory|redis://host:port|
 * postgresql://user:password@host:port/database|zookeeper://host:port]}. On a real server the
 * frozen instance reaches it through a TCP proxy that goes silent while it is frozen.
 */
public final class Demo {

    /** Demo settings. */
    public record Config(Duration duration, int workers, int resources, Duration lease, Duration pause, boolean live,
                         String backend) {
        /** Settings on the in-memory backend. */
        public Config(Duration duration, int workers, int resources, Duration lease, Duration pause, boolean live) {
            this(duration, workers, resources, lease, pause, live, "memory");
        }
    }

    /** What the run did. */
    public record Summary(long acquisitions, long handoffs, double handoffP50Ms, double handoffP99Ms,
                          long staleWritesRejected, long staleWritesAccepted, long lostUpdates, long leasesLost) {
    }

    private Demo() {
    }

    /**
     * Runs the demo from the command line.
     *
     * @param args see the class documentation
     */
    public static void main(String[] args) {
        Duration duration = Duration.ofSeconds(10);
        int workers = 4;
        int resources = 3;
        String backend = "memory";
        for (String a : args) {
            if (a.startsWith("--duration=")) {
                duration = parseDuration(a.substring("--duration=".length()));
            } else if (a.startsWith("--workers=")) {
                workers = Integer.parseInt(a.substring("--workers=".length()));
            } else if (a.startsWith("--resources=")) {
                resources = Integer.parseInt(a.substring("--resources=".length()));
            } else if (a.startsWith("--backend=")) {
                backend = a.substring("--backend=".length());
            } else {
                System.err.println("unknown argument " + a + "; usage: Demo [--duration=10s] [--workers=4] [--resources=3] "
                        + "[--backend=memory|redis://host:port|postgresql://user:password@host:port/database|zookeeper://host:port]");
                System.exit(2);
            }
        }
        Summary s;
        try {
            s = run(new Config(duration, workers, resources, Duration.ofMillis(600), Duration.ofMillis(1500), true, backend), System.out);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        System.exit(s.staleWritesAccepted() == 0 && s.lostUpdates() == 0 ? 0 : 1);
    }

    static Duration parseDuration(String s) {
        if (s.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
        }
        if (s.endsWith("s")) {
            return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1)));
        }
        if (s.endsWith("m")) {
            return Duration.ofMinutes(Long.parseLong(s.substring(0, s.length() - 1)));
        }
        return Duration.ofSeconds(Long.parseLong(s));
    }

    /**
     * Runs the demo to the end of its duration.
     *
     * @param config settings
     * @param out    where the live view and the summary go
     * @return the summary
     */
    public static Summary run(Config config, PrintStream out) {
        try (DemoBackends backends = DemoBackends.open(config.backend())) {
            Duration lease = backends.lease(config.lease());
            Duration pause = config.pause().plus(lease.minus(config.lease()).multipliedBy(2));
            return run(new Config(config.duration(), config.workers(), config.resources(), lease, pause, config.live(),
                    backends.kind()), backends, out);
        }
    }

    private static Summary run(Config config, DemoBackends backends, PrintStream out) {
        FencedLedger ledger = new FencedLedger();
        Stats stats = new Stats(config.resources());
        List<String> accounts = new ArrayList<>();
        for (int i = 1; i <= config.resources(); i++) {
            accounts.add("account:" + i);
        }
        long end = System.nanoTime() + config.duration().toNanos();
        AtomicBoolean paused = new AtomicBoolean();
        // the frozen instance runs its timers and critical section on a thread we can stall
        Scheduler freezable = Schedulers.fromExecutorService(Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "worker-0-frozen-later");
            t.setDaemon(true);
            return t;
        }));
        List<LockClient> clients = new ArrayList<>();
        List<Mono<Void>> workers = new ArrayList<>();
        for (int w = 0; w < config.workers(); w++) {
            LockOptions.Builder ob = LockOptions.builder().leaseTime(config.lease());
            if (w == 0) {
                ob.scheduler(freezable);
            }
            LockClient client = backends.client(w, ob.build());
            clients.add(client);
            int worker = w;
            Mono<Void> one = Mono.defer(() -> {
                        String account = accounts.get(ThreadLocalRandom.current().nextInt(accounts.size()));
                        int idx = accounts.indexOf(account);
                        stats.waiting(idx, +1);
                        return client.withLock(account, lease -> {
                                    stats.granted(idx, worker, lease.token());
                                    Mono<Long> read = Mono.fromSupplier(() -> ledger.read(account));
                                    if (worker == 0) {
                                        read = read.publishOn(freezable);
                                    }
                                    return read
                                            .delayElement(Duration.ofMillis(ThreadLocalRandom.current().nextInt(2, 15)),
                                                    worker == 0 ? freezable : Schedulers.parallel())
                                            .map(balance -> {
                                                if (worker == 0 && System.nanoTime() > end - config.duration().toNanos() / 2
                                                        && paused.compareAndSet(false, true)) {
                                                    out.println("  >> worker-0 freezes for " + config.pause().toMillis()
                                                            + " ms inside its critical section (lease " + config.lease().toMillis()
                                                            + " ms, token " + lease.token() + ")");
                                                    backends.freeze();
                                                    LockSupport.parkNanos(config.pause().toNanos()); // a stop-the-world pause
                                                    backends.thaw();
                                                    boolean ok = ledger.write(account, lease.token(), balance + 1);
                                                    out.println("  >> worker-0 wakes and writes with token " + lease.token()
                                                            + ": " + (ok ? "ACCEPTED (bad!)" : "rejected as stale"));
                                                    return ok;
                                                }
                                                return ledger.write(account, lease.token(), balance + 1);
                                            });
                                })
                                .doOnNext(ok -> stats.released(idx))
                                .onErrorResume(LockLostException.class, e -> {
                                    stats.leasesLost.incrementAndGet();
                                    stats.released(idx);
                                    return Mono.empty();
                                })
                                .then();
                    })
                    .repeat(() -> System.nanoTime() < end)
                    .then();
            workers.add(one);
        }
        Flux<Long> view = Flux.interval(Duration.ofMillis(500))
                .doOnNext(t -> {
                    if (config.live()) {
                        out.println(stats.line(accounts, t + 1));
                    }
                });
        out.println("reactive-locks demo: " + config.workers() + " instances, " + config.resources()
                + " fenced accounts, lease " + config.lease().toMillis() + " ms, " + config.backend() + " backend, "
                + config.duration().toSeconds() + " s");
        Disposable liveView = view.subscribe();
        try {
            Mono.when(workers).block(config.duration().plus(Duration.ofSeconds(30)));
        } finally {
            liveView.dispose();
        }
        Flux.fromIterable(clients).flatMap(LockClient::close).blockLast(Duration.ofSeconds(10));
        freezable.dispose();

        long lost = 0;
        for (String a : accounts) {
            lost += Math.abs(ledger.acceptedWrites(a) - ledger.read(a));
        }
        double[] h = stats.handoffsMs();
        Summary s = new Summary(stats.acquisitions.get(), h.length, percentile(h, 0.5), percentile(h, 0.99),
                ledger.staleRejected(), ledger.staleAccepted(), lost, stats.leasesLost.get());
        out.printf("summary: acquisitions %d, handoffs %d (p50 %.2f ms, p99 %.2f ms), leases lost %d, "
                        + "stale writes rejected %d, stale writes accepted %d, lost updates %d%n",
                s.acquisitions(), s.handoffs(), s.handoffP50Ms(), s.handoffP99Ms(), s.leasesLost(),
                s.staleWritesRejected(), s.staleWritesAccepted(), s.lostUpdates());
        return s;
    }

    private static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /** An account balance per name that accepts a write only with a token at least as high as any seen. */
    static final class FencedLedger {
        private final Map<String, long[]> rows = new ConcurrentHashMap<>(); // balance, highest token, accepted writes
        private final AtomicLong staleRejected = new AtomicLong();

        long read(String account) {
            long[] r = rows.get(account);
            synchronized (this) {
                return r == null ? 0 : r[0];
            }
        }

        synchronized boolean write(String account, long token, long balance) {
            long[] r = rows.computeIfAbsent(account, k -> new long[] {0, Long.MIN_VALUE, 0});
            if (token < r[1]) {
                staleRejected.incrementAndGet();
                return false;
            }
            r[0] = balance;
            r[1] = token;
            r[2]++;
            return true;
        }

        synchronized long acceptedWrites(String account) {
            long[] r = rows.get(account);
            return r == null ? 0 : r[2];
        }

        long staleRejected() {
            return staleRejected.get();
        }

        long staleAccepted() {
            return 0; // the fence never accepts a lower token: counted to show it
        }
    }

    /** Counters and the live view. */
    static final class Stats {
        final AtomicLong acquisitions = new AtomicLong();
        final AtomicLong leasesLost = new AtomicLong();
        private final int[] waiting;
        private final long[] releasedAt;
        private final String[] holder;
        private final List<Double> handoffs = new ArrayList<>();

        Stats(int resources) {
            waiting = new int[resources];
            releasedAt = new long[resources];
            holder = new String[resources];
            Arrays.fill(holder, "-");
        }

        synchronized void waiting(int idx, int delta) {
            waiting[idx] += delta;
        }

        synchronized void granted(int idx, int worker, long token) {
            acquisitions.incrementAndGet();
            waiting[idx]--;
            if (releasedAt[idx] != 0) {
                handoffs.add((System.nanoTime() - releasedAt[idx]) / 1e6);
                releasedAt[idx] = 0;
            }
            holder[idx] = "worker-" + worker + "#" + token;
        }

        synchronized void released(int idx) {
            releasedAt[idx] = waiting[idx] > 0 ? System.nanoTime() : 0;
            holder[idx] = "-";
        }

        synchronized double[] handoffsMs() {
            return handoffs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        }

        synchronized String line(List<String> accounts, long tick) {
            StringBuilder sb = new StringBuilder(String.format("[%5.1fs] acquisitions %6d |", tick / 2.0, acquisitions.get()));
            for (int i = 0; i < accounts.size(); i++) {
                sb.append(' ').append(accounts.get(i)).append(": ").append(holder[i]).append(" (").append(waiting[i]).append(" waiting) |");
            }
            return sb.toString();
        }
    }
}
